// ipscope console: the only script. Copy buttons (data-copy names the element whose text is copied).
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy'));
  if (!source) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(
    () => {
      button.textContent = 'Copied';
    },
    () => {
      button.textContent = 'Select and copy by hand';
    },
  );
});
