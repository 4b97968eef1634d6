// ipscope console: the only script (a file under the CSP, no inline script). Every page works
// without it; with it: copy buttons, and the playground's operation switch without a page load.

// Copy buttons: data-copy names the element whose text is copied.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy'));
  if (!source) return;
  const label = button.textContent;
  const text = source.matches('ul, ol')
    ? Array.from(source.querySelectorAll('li'), (li) => li.textContent.trim()).join('\n')
    : source.textContent.trim();
  navigator.clipboard.writeText(text).then(
    () => {
      button.textContent = 'Copied';
      setTimeout(() => (button.textContent = label), 2000);
    },
    () => {
      button.textContent = 'Select and copy by hand';
    },
  );
});

// The playground: the operation's select shows that operation's form (all are on the page).
for (const select of document.querySelectorAll('select[data-op-switch]')) {
  const choose = select.form && select.form.querySelector('[data-op-choose]');
  if (choose) choose.hidden = true;
  select.addEventListener('change', () => {
    for (const section of document.querySelectorAll('[data-op]')) {
      section.hidden = section.getAttribute('data-op') !== select.value;
    }
    const url = new URL(window.location.href);
    url.search = new URLSearchParams({ op: select.value }).toString();
    window.history.replaceState(null, '', url);
    for (const result of document.querySelectorAll('[data-run-result]')) result.hidden = true;
  });
}

// Tables with a filter: data-filter names the table; rows without the text typed are hidden.
for (const label of document.querySelectorAll('label[data-filter]')) {
  const table = document.getElementById(label.getAttribute('data-filter'));
  const input = label.querySelector('input');
  if (!table || !input) continue;
  label.hidden = false;
  input.addEventListener('input', () => {
    const wanted = input.value.trim().toLowerCase();
    for (const row of table.tBodies[0].rows) {
      row.hidden = !row.textContent.toLowerCase().includes(wanted);
    }
  });
}
