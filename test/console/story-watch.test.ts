/**
 * The console's watch pages in headless Chromium against the real server (its watch service
 * delivering every 100 ms) and a real loopback receiver that verifies every request with
 * `standardwebhooks` (test/helpers/webhook-receiver.ts): a watch entry by the form and a bulk
 * paste (a comment, a blank line, one entry already watched), a malformed entry and bad lines shown
 * beside their field with nothing added, the plan's limit (FREE_MAX_WATCH_ENTRIES) said before and
 * when a paste would pass it, removal after a confirmation; a webhook endpoint whose URL passes the
 * SSRF guard (loopback allowed here by WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOWED_ADDRESSES, the
 * metadata address and a private one still refused), its secret shown once, a test event received
 * and verified with it and seen in the delivery log with status 200, a redelivery as a second
 * attempt, a rotated secret that verifies the next test event, disable and enable, the step-up a
 * new secret needs, and removal. Every new page is checked by `check` (axe-core at 1280 and 390 px
 * in light and dark, no sideways scrolling, screenshots).
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { problemOf, startStory } from '../helpers/console-story.js';
import { startWebhookReceiver, until } from '../helpers/webhook-receiver.js';

const OWNER = 'owner@example.test';

t.setTimeout(600_000);

/** Reloads the page until `ok` holds for the text of `selector` (the deliverer runs apart from it). */
async function reloadUntil(page: Page, selector: string, ok: (text: string) => boolean): Promise<string> {
  let text = '';
  await until(
    `${selector} on ${page.url()}`,
    async () => {
      await page.reload();
      text =
        (await page
          .locator(selector)
          .textContent()
          .catch(() => null)) ?? '';
      return ok(text);
    },
    20_000,
  );
  return text;
}

t.test('watchlist and webhooks in the console', async (t) => {
  const story = await startStory(t, {
    FREE_MAX_WATCH_ENTRIES: '5',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
    WEBHOOK_POLL_MS: '100',
  });
  const { server, page, check } = story;
  const receiver = await startWebhookReceiver(t, () => ({ status: 200, body: 'ok, thanks' }));
  await server.store.inviteUser(OWNER);
  const ws = await server.store.createWorkspace({ name: 'Acme' });
  await server.store.addMember(ws.id, OWNER, 'owner');
  const prj = await server.store.createProject({ workspaceId: ws.id, name: 'Website' });
  const projectPath = `/w/${ws.id}/p/${prj.id}`;
  await story.signIn(OWNER, projectPath);
  await page.getByRole('heading', { name: 'Website' }).waitFor();
  t.match(await page.textContent('#watch-summary'), /^0 watch entries, 0 webhook endpoints/);

  // The watchlist: the limit shows before anything is added.
  await page.getByRole('link', { name: 'Watchlist' }).click();
  await page.getByRole('heading', { name: 'Watchlist' }).waitFor();
  t.match(await page.textContent('#watch-count'), /^0 of 5\s+watch entries in this project \(plan Free\)\.$/);
  t.match(await page.textContent('main'), /Nothing watched yet\. Add an entry below\./);

  // One entry by the form, normalized.
  await page.getByLabel('Entry').fill('Shop.Example.');
  await page.getByRole('button', { name: 'Add entry' }).click();
  await page.getByText('Added 1 entry.').waitFor();
  t.same(
    await page.locator('#watch-entries tbody tr td:nth-child(-n+2)').allTextContents(),
    ['domain', 'shop.example'],
    'the domain, normalized',
  );

  // A malformed entry: the form again, its problem beside the field, its value kept.
  await page.getByLabel('Entry').fill('192.0.2.1/24');
  await page.getByRole('button', { name: 'Add entry' }).click();
  await page.locator('#e-subject').waitFor();
  t.equal(await problemOf(t, page, 'subject'), '192.0.2.1/24: host bits are set, did you mean 192.0.2.0/24?');
  t.equal(await page.inputValue('#f-subject'), '192.0.2.1/24', 'the value is kept');
  t.match(await page.textContent('#watch-count'), /^1 of 5/, 'nothing was added');

  // A bulk paste: comments, a blank line, an entry already watched.
  await page
    .getByLabel('Entries, one per line')
    .fill('# our network\n192.0.2.0/24\nAS13335   # the CDN\n\nshop.example\n');
  await page.getByRole('button', { name: 'Add all' }).click();
  await page.getByText('Added 2 entries; 1 entry was watched already.').waitFor();
  t.same(
    await page.locator('#watch-entries tbody tr td:nth-child(2)').allTextContents(),
    ['shop.example', '192.0.2.0/24', 'AS13335'],
    'every entry, oldest first',
  );

  // Bad lines: all or nothing, each named by its line.
  const badPaste = '198.51.100.7\nnot a domain!\n\n10.0.0.0/33\n';
  await page.getByLabel('Entries, one per line').fill(badPaste);
  await page.getByRole('button', { name: 'Add all' }).click();
  await page.locator('#e-lines').waitFor();
  t.same(
    await page.locator('#e-lines li').allTextContents(),
    [
      'Line 2: not a domain!: domain contains whitespace',
      'Line 4: 10.0.0.0/33: not a CIDR prefix (e.g. 192.0.2.0/24, 2001:db8::/32)',
    ],
    'each bad line with its number and its problem',
  );
  t.equal(await page.locator('#f-lines').getAttribute('aria-invalid'), 'true');
  t.match(
    await page.textContent('.notice.error'),
    'Nothing was added: 2 lines are not entries. Check the form: one problem, marked below.',
  );
  t.equal(await page.inputValue('#f-lines'), badPaste, 'the paste is kept');
  t.match(await page.textContent('#watch-count'), /^3 of 5/, 'nothing was added');

  // The plan's limit: a paste that would pass it adds nothing and says why.
  await page.getByLabel('Entries, one per line').fill('198.51.100.7\n2001:db8::/32\nexample.org\n');
  await page.getByRole('button', { name: 'Add all' }).click();
  await page.locator('.notice.error').waitFor();
  t.match(
    await page.textContent('.notice.error'),
    'Nothing was added: the project watches 3 entries of at most 5 (plan Free), and 3 entries more would pass the limit. Remove entries first, or add fewer.',
  );
  t.match(await page.textContent('#watch-count'), /^3 of 5/);
  t.equal((await server.store.listWatchEntries(prj.id)).length, 3, 'the store has 3 entries');
  await check('watchlist-problems');
  await page.getByLabel('Entries, one per line').fill('198.51.100.7\n2001:DB8::/32\n');
  await page.getByRole('button', { name: 'Add all' }).click();
  await page.getByText('Added 2 entries.').waitFor();
  t.match(
    await page.textContent('#watch-count'),
    /^5 of 5\s+watch entries in this project \(plan Free\): the most the plan allows\./,
    'at the limit the count says so',
  );
  t.equal(await page.getByRole('button', { name: 'Add all' }).count(), 0, 'and no form is offered');
  t.same(await page.locator('#watch-entries tbody tr td:nth-child(2)').allTextContents(), [
    'shop.example',
    '192.0.2.0/24',
    'AS13335',
    '198.51.100.7',
    '2001:db8::/32',
  ]);
  await check('watchlist');

  // Remove after a confirmation.
  await page.getByRole('link', { name: 'Remove AS13335' }).click();
  await page.getByRole('heading', { name: 'Remove this entry?' }).waitFor();
  await check('watch-remove');
  await page.getByRole('button', { name: 'Remove entry' }).click();
  await page.getByText('The entry is removed').waitFor();
  t.match(await page.textContent('#watch-count'), /^4 of 5/);
  t.same((await server.store.listWatchEntries(prj.id)).map((e) => e.subject).sort(), [
    '192.0.2.0/24',
    '198.51.100.7',
    '2001:db8::/32',
    'shop.example',
  ]);

  // Webhooks: an endpoint's URL passes the SSRF guard, as the admin CLI's does.
  await page.goto(`${server.console}${projectPath}`);
  t.match(await page.textContent('#watch-summary'), /^4 watch entries, 0 webhook endpoints/);
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
  t.match(await page.textContent('main'), /No endpoints yet\. Add one to receive the events\./);
  await page.getByRole('link', { name: 'Add an endpoint' }).click();
  await page.getByRole('heading', { name: 'Add a webhook endpoint' }).waitFor();
  const refused = {
    'http://169.254.169.254/latest/meta-data':
      'This URL cannot receive webhooks: refused: 169.254.169.254 resolves to 169.254.169.254 is not a public address (Link Local, 169.254.0.0/16).',
    'http://10.0.0.1/hooks':
      'This URL cannot receive webhooks: refused: 10.0.0.1 resolves to 10.0.0.1 is not a public address (Private-Use, 10.0.0.0/8).',
    'http://127.0.0.2/hooks':
      'This URL cannot receive webhooks: refused: 127.0.0.2 resolves to 127.0.0.2 is not a public address (Loopback, 127.0.0.0/8).',
    'ftp://example.org/hooks':
      'This URL cannot receive webhooks: ftp: URLs are refused: webhooks go to https or http only.',
  };
  for (const [url, message] of Object.entries(refused)) {
    await page.getByLabel('URL').fill(url);
    await page.getByLabel('domain.dns_changed').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.locator('#e-url').waitFor();
    t.equal(await problemOf(t, page, 'url'), message, `${url} is refused`);
    t.equal(await page.inputValue('#f-url'), url, 'the URL is kept');
    t.ok(await page.getByLabel('domain.dns_changed').isChecked(), 'and the kinds ticked');
  }
  t.same(await server.store.listEndpoints(prj.id), [], 'no endpoint was stored');
  await check('webhook-new-problems');

  await page.getByLabel('URL').fill(receiver.url);
  await page.getByLabel('ip.range_entered').check();
  await page.getByLabel('Description (optional)').fill('Shop alerts');
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await page.getByRole('heading', { name: "Your endpoint's signing secret" }).waitFor();
  const secret = (await page.textContent('#webhook-secret'))!.trim();
  t.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/, 'a Standard Webhooks secret of 24 bytes');
  receiver.secret = secret;
  await check('webhook-secret');
  await page.reload();
  await page.getByRole('heading', { name: 'This secret was shown once' }).waitFor();
  t.notOk((await page.content()).includes(secret), 'a reload does not show the secret again');

  const [endpoint] = await server.store.listEndpoints(prj.id);
  t.same(
    [endpoint!.url, endpoint!.kinds, endpoint!.description],
    [receiver.url, ['domain.dns_changed', 'ip.range_entered'], 'Shop alerts'],
  );
  const endpointPath = `${projectPath}/webhooks/${endpoint!.id}`;

  // A test event: received, verified with the secret read from the page, then in the log as 200.
  await page.getByRole('link', { name: 'To the endpoint' }).click();
  await page.getByRole('heading', { name: 'Webhook endpoint' }).waitFor();
  t.match(await page.textContent('main'), /No attempts yet\. Send a test event/);
  await page.getByRole('button', { name: 'Send a test event' }).click();
  await page.getByText(/^Test event evt_test_[0-9a-z]{16} is queued/).waitFor();
  const eventId = /evt_test_[0-9a-z]{16}/.exec((await page.textContent('.notice.ok'))!)![0];
  await until('the test event at the receiver', () => receiver.delivered().has(eventId));
  const received = receiver.delivered().get(eventId)!;
  t.equal(received.length, 1);
  t.ok(received[0]!.verified, 'verified by standardwebhooks with the secret shown once');
  const body = JSON.parse(received[0]!.body) as { type: string; timestamp: string; data: { id: string } };
  t.same([body.type, body.data], ['webhook.test', { id: eventId }], "the CLI's test event body");
  t.match(body.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  const rowOf = (text: string) => text.replace(/\s+/g, ' ').trim();
  const log = await reloadUntil(page, '#delivery-log tbody', (text) => text.includes(eventId));
  t.match(
    rowOf(log),
    new RegExp(`^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC${eventId}1200\\d+ msok, thanksRedeliver$`),
    'the attempt in the log: time, event, attempt 1, status 200, duration, the reply',
  );
  await check('webhook-endpoint');

  // Redeliver: a second attempt with the same webhook-id.
  await page.getByRole('button', { name: `Redeliver ${eventId}` }).click();
  await page.getByText('The event is queued again').waitFor();
  await until('the redelivery at the receiver', () => receiver.delivered().get(eventId)?.length === 2);
  t.ok(
    receiver
      .delivered()
      .get(eventId)!
      .every((r) => r.verified),
    'both deliveries verified',
  );
  await reloadUntil(page, '#delivery-log tbody', (text) => text.split(eventId).length === 3);
  const attempts = await page
    .locator('#delivery-log tbody tr')
    .evaluateAll((rows) => rows.map((r) => [r.children[2]!.textContent, r.children[3]!.textContent]));
  t.same(
    attempts,
    [
      ['2', '200'],
      ['1', '200'],
    ],
    'the second attempt above the first, both 200',
  );
  t.equal(
    await page.getByRole('button', { name: `Redeliver ${eventId}` }).count(),
    1,
    'one redeliver button per event',
  );

  // The list: URL, kinds, state, description; the secret on no page after its own.
  await page.goto(`${server.console}${projectPath}/webhooks`);
  t.same(
    (await page.locator('#endpoints tbody tr td').allTextContents()).map((c) => c.trim()),
    [receiver.url, 'domain.dns_changed, ip.range_entered', 'enabled', 'Shop alerts'],
  );
  t.notOk((await page.content()).includes(secret), 'the list does not show the secret');
  await check('webhooks');

  // Rotation: a new secret, shown once; the next test event verifies with it.
  await page.goto(`${server.console}${endpointPath}`);
  t.notOk((await page.content()).includes(secret), 'nor does the endpoint page');
  await page.getByRole('button', { name: 'Rotate the secret' }).click();
  await page.getByRole('heading', { name: 'The new signing secret' }).waitFor();
  const rotated = (await page.textContent('#webhook-secret'))!.trim();
  t.match(rotated, /^whsec_[A-Za-z0-9+/]{32}$/);
  t.not(rotated, secret, 'a new secret');
  receiver.secret = rotated;
  await page.getByRole('link', { name: 'To the endpoint' }).click();
  t.match(await page.textContent('main'), /the previous one still signs too/);
  await page.getByRole('button', { name: 'Send a test event' }).click();
  await page.getByText(/^Test event evt_test_/).waitFor();
  const second = /evt_test_[0-9a-z]{16}/.exec((await page.textContent('.notice.ok'))!)![0];
  await until('the second test event, verified with the new secret', () => receiver.delivered().has(second));

  // Disable and enable again.
  await page.getByRole('button', { name: 'Disable' }).click();
  await page.getByText('The endpoint is disabled').waitFor();
  t.match(
    rowOf((await page.textContent('#endpoint-state'))!),
    /^disabled since \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/,
  );
  await page.getByRole('button', { name: 'Enable' }).click();
  await page.getByText('The endpoint is enabled').waitFor();
  t.equal(rowOf((await page.textContent('#endpoint-state'))!), 'enabled');

  // A new secret needs a sign-in under ten minutes old, as a key does.
  await story.ageSession();
  await page.goto(`${server.console}${projectPath}/webhooks/new`);
  await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
  t.match(await page.textContent('main'), /Creating a key or a webhook signing secret needs a sign-in/);
  await page.goto(`${server.console}${endpointPath}`);
  await page.getByRole('button', { name: 'Rotate the secret' }).click();
  await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();

  // Remove after a confirmation.
  await page.goto(`${server.console}${endpointPath}`);
  await page.getByRole('link', { name: 'Remove' }).click();
  await page.getByRole('heading', { name: 'Remove this endpoint?' }).waitFor();
  await page.getByRole('button', { name: 'Remove endpoint' }).click();
  await page.getByText('The endpoint is removed').waitFor();
  t.same(await server.store.listEndpoints(prj.id), []);
  t.equal(page.url(), `${server.console}${projectPath}/webhooks?done=removed`);

  t.same(story.cspViolations, [], 'no Content-Security-Policy violation on any page');
  t.equal(story.checked.length, 7, 'every page was checked');
});
