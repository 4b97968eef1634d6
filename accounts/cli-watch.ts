/**
 * Admin commands `watch add|list|remove`, `webhooks add|list|log|test|redeliver|rotate|enable|
 * disable|remove` and `plans watch-limit` (registered by cli.ts; docs/decisions/0034). A webhook
 * URL passes the SSRF guard (server/watch/ssrf.ts) before it is stored; its secret is printed once.
 */
import fs from 'node:fs';
import { type Command } from 'commander';
import { loadSettings } from '../shared/config.js';
import { EVENT_KINDS } from '../server/watch/compute.js';
import { SECRET_ROTATION_MS, endpointProblems, testEventPayload } from '../server/watch/endpoints.js';
import { guardOfSettings } from '../server/watch/ssrf.js';
import { parseWatchList, parseWatchSubject } from '../server/watch/subjects.js';
import { AccountsError } from './store.js';
import {
  type CliIo,
  capArg,
  existingProject,
  existingWorkspace,
  formatTable,
  shortIso,
  type StoreRunner,
} from './cli-support.js';

export function registerWatchCommands(program: Command, withStore: StoreRunner, io: CliIo): void {
  const settings = () => loadSettings(process.env);
  const projectOf = async (
    store: Parameters<Parameters<StoreRunner>[0]>[0],
    options: { project: string; workspace?: string },
  ) => {
    const workspace = options.workspace ? await existingWorkspace(store, options.workspace) : undefined;
    return existingProject(store, options.project, workspace?.id);
  };

  const watch = program
    .command('watch')
    .description('Watch entries of a project: domains, IP addresses, CIDR prefixes and AS numbers.');

  watch
    .command('add')
    .description('Add watch entries (one per argument, or one per line of --file; - reads standard input).')
    .requiredOption('--project <name>', 'project name or id (prj_…)')
    .option('--workspace <name>', 'workspace of the project (name or id), when the name is not unique')
    .option('--file <file>', 'a bulk paste: one entry per line, # starts a comment')
    .argument('[entries...]', 'e.g. shop.example 192.0.2.1 192.0.2.0/24 AS13335')
    .action(
      withStore(
        async (store, entries: string[], options: { project: string; workspace?: string; file?: string }) => {
          const project = await projectOf(store, options);
          const parsed = entries.map(parseWatchSubject);
          const wrong = parsed.flatMap((p) => (p.ok ? [] : [p.reason]));
          const ok = parsed.flatMap((p) => (p.ok ? [{ kind: p.kind, subject: p.subject }] : []));
          if (options.file) {
            const list = parseWatchList(fs.readFileSync(options.file === '-' ? 0 : options.file, 'utf8'));
            if (list.ok) ok.push(...list.entries);
            else wrong.push(...list.problems.map((p) => `line ${p.line}: ${p.reason}`));
          }
          if (wrong.length > 0)
            throw new AccountsError('invalid_input', `nothing added: ${wrong.join('; ')}`);
          const result = await store.addWatchEntries(project.id, ok, settings().FREE_MAX_WATCH_ENTRIES);
          io.out(
            `added ${result.added.length} watch entries to project "${project.name}" (${result.existing} already watched; limit ${result.limit})`,
          );
        },
      ),
    );

  watch
    .command('list')
    .description("List a project's watch entries.")
    .requiredOption('--project <name>', 'project name or id (prj_…)')
    .option('--workspace <name>', 'workspace of the project (name or id)')
    .action(
      withStore(async (store, options: { project: string; workspace?: string }) => {
        const project = await projectOf(store, options);
        const entries = await store.listWatchEntries(project.id);
        if (entries.length === 0)
          return void io.out(
            `no watch entries: add one with "npx server watch add --project ${project.name} <entry>"`,
          );
        for (const line of formatTable(
          ['ID', 'KIND', 'SUBJECT', 'ADDED'],
          entries.map((e) => [e.id, e.kind, e.subject, shortIso(e.createdAt)]),
        ))
          io.out(line);
      }),
    );

  watch
    .command('remove')
    .description('Remove a watch entry.')
    .requiredOption('--project <name>', 'project name or id (prj_…)')
    .option('--workspace <name>', 'workspace of the project (name or id)')
    .argument('<entry-id>', 'id of the entry (wat_…), as shown by "watch list"')
    .action(
      withStore(async (store, id: string, options: { project: string; workspace?: string }) => {
        const project = await projectOf(store, options);
        await store.removeWatchEntry(project.id, id);
        io.out(`removed watch entry ${id} from project "${project.name}"`);
      }),
    );

  const webhooks = program
    .command('webhooks')
    .description('Webhook endpoints of a project: signed per Standard Webhooks, to public https URLs only.');

  webhooks
    .command('add')
    .description('Add an endpoint and print its signing secret once.')
    .requiredOption('--project <name>', 'project name or id (prj_…)')
    .option('--workspace <name>', 'workspace of the project (name or id)')
    .option(
      '--kinds <kinds>',
      `event kinds it receives, comma separated (${EVENT_KINDS.join(', ')}); default all`,
    )
    .option('--description <text>', 'what it is for')
    .argument('<url>', 'https://… (http only with WEBHOOK_ALLOW_HTTP=true)')
    .action(
      withStore(
        async (
          store,
          url: string,
          options: { project: string; workspace?: string; kinds?: string; description?: string },
        ) => {
          const project = await projectOf(store, options);
          const kinds = options.kinds
            ? options.kinds
                .split(',')
                .map((k) => k.trim())
                .filter(Boolean)
            : [];
          const problems = await endpointProblems(
            { url, kinds, description: options.description },
            guardOfSettings(settings()),
          );
          const wrong = [problems.kinds, problems.description, problems.url].filter(Boolean);
          if (wrong.length > 0) throw new AccountsError('invalid_input', wrong.join('; '));
          const { endpoint, secret } = await store.createEndpoint({
            projectId: project.id,
            url,
            kinds,
            description: options.description,
          });
          io.out(`created webhook endpoint ${endpoint.id} for project "${project.name}": ${endpoint.url}`);
          io.out(`secret: ${secret}`);
          io.out(
            'This is the only time the secret is shown: store it now (verify deliveries with any Standard Webhooks library).',
          );
        },
      ),
    );

  webhooks
    .command('list')
    .description("List a project's endpoints (never their secrets).")
    .requiredOption('--project <name>', 'project name or id (prj_…)')
    .option('--workspace <name>', 'workspace of the project (name or id)')
    .action(
      withStore(async (store, options: { project: string; workspace?: string }) => {
        const project = await projectOf(store, options);
        const rows = (await store.listEndpoints(project.id)).map((e) => [
          e.id,
          e.url,
          e.kinds.length === 0 ? 'all' : e.kinds.join(','),
          e.disabledAt
            ? `disabled ${shortIso(e.disabledAt)}`
            : e.failingSince
              ? `failing since ${shortIso(e.failingSince)}`
              : 'enabled',
        ]);
        if (rows.length === 0)
          return void io.out(
            `no endpoints: add one with "npx server webhooks add --project ${project.name} <url>"`,
          );
        for (const line of formatTable(['ID', 'URL', 'KINDS', 'STATE'], rows)) io.out(line);
      }),
    );

  webhooks
    .command('log')
    .description("An endpoint's delivery log, newest first.")
    .argument('<endpoint-id>', 'whe_…')
    .action(
      withStore(async (store, id: string) => {
        const rows = (await store.listAttempts(id, 50)).map((a) => [
          shortIso(a.startedAt),
          a.eventId,
          String(a.attempt),
          a.status === null ? '-' : String(a.status),
          `${a.durationMs} ms`,
          (a.error ?? a.replyHead).replace(/\s+/g, ' ').slice(0, 60),
        ]);
        for (const line of formatTable(['AT', 'EVENT', 'ATTEMPT', 'STATUS', 'DURATION', 'REPLY'], rows))
          io.out(line);
      }),
    );

  webhooks
    .command('test')
    .description('Send a test event to an endpoint (delivered like any other).')
    .argument('<endpoint-id>', 'whe_…')
    .action(
      withStore(async (store, id: string) => {
        const eventId = await store.createTestEvent(id, (eid) => testEventPayload(eid));
        io.out(`queued test event ${eventId} for ${id}`);
      }),
    );

  webhooks
    .command('redeliver')
    .description('Send an event to an endpoint again (the same webhook-id).')
    .argument('<endpoint-id>', 'whe_…')
    .argument('<event-id>', 'evt_…')
    .action(
      withStore(async (store, id: string, eventId: string) => {
        await store.redeliver(eventId, id);
        io.out(`queued ${eventId} for ${id} again`);
      }),
    );

  webhooks
    .command('rotate')
    .description('A new signing secret, printed once; the old one keeps signing for a day.')
    .argument('<endpoint-id>', 'whe_…')
    .action(
      withStore(async (store, id: string) => {
        const secret = await store.rotateEndpointSecret(id, new Date(Date.now() + SECRET_ROTATION_MS));
        io.out(`new secret: ${secret}`);
        io.out('This is the only time it is shown. Deliveries carry both signatures for 24 hours.');
      }),
    );

  for (const [name, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    webhooks
      .command(name)
      .description(
        enabled
          ? 'Enable an endpoint again (its waiting deliveries resume).'
          : 'Disable an endpoint (deliveries wait).',
      )
      .argument('<endpoint-id>', 'whe_…')
      .action(
        withStore(async (store, id: string) => {
          const endpoint = await store.setEndpointEnabled(id, enabled);
          io.out(`endpoint ${endpoint.id} ${enabled ? 'enabled' : 'disabled'}`);
        }),
      );
  }

  webhooks
    .command('remove')
    .description('Remove an endpoint, its deliveries and its log.')
    .argument('<endpoint-id>', 'whe_…')
    .action(
      withStore(async (store, id: string) => {
        await store.removeEndpoint(id);
        io.out(`removed endpoint ${id}`);
      }),
    );

  const plans = program.commands.find((c) => c.name() === 'plans');
  plans
    ?.command('watch-limit')
    .description('Set the watch entries per project of a plan ("none": the FREE_MAX_WATCH_ENTRIES setting).')
    .argument('<plan>', 'plan name (of "plans list")')
    .argument('<limit>', 'entries per project, or none', capArg)
    .action(
      withStore(async (store, plan: string, limit: number | null) => {
        await store.setPlanWatchLimit(plan, limit);
        io.out(
          `plan ${plan}: ${limit === null ? "the Free plan's watch limit" : `${limit} watch entries per project`}`,
        );
      }),
    );
}
