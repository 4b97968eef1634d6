/**
 * The frame of every console page and the small pieces forms share. Pages are preact components
 * rendered to a string on the server: every text and attribute is escaped by the renderer, no HTML
 * is put together from strings by hand.
 */
import type { ComponentChildren } from 'preact';
import { renderToString } from 'preact-render-to-string';

/** What every page needs to know of the request. */
export interface PageContext {
  css: string;
  js: string;
  csrf: string;
  /** The signed-in user's address, or null before sign-in. */
  email: string | null;
}

export interface Crumb {
  label: string;
  href?: string;
}

export function renderPage(
  ctx: PageContext,
  title: string,
  body: ComponentChildren,
  crumbs: Crumb[] = [],
): string {
  return (
    '<!doctype html>' +
    renderToString(
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{`${title} · ipscope console`}</title>
          <link rel="stylesheet" href={ctx.css} />
          <script src={ctx.js} defer />
        </head>
        <body>
          <a class="skip" href="#main">
            Skip to content
          </a>
          <header class="top">
            <a class="brand" href="/">
              ipscope console
            </a>
            {ctx.email !== null && (
              <nav aria-label="Account">
                <ul>
                  <li>
                    <a href="/">Workspaces</a>
                  </li>
                  <li>
                    <a href="/account">Account</a>
                  </li>
                  <li>
                    <form class="inline" method="post" action="/sign-out">
                      <Csrf ctx={ctx} />
                      <button class="link" type="submit">
                        Sign out <span class="muted">({ctx.email})</span>
                      </button>
                    </form>
                  </li>
                </ul>
              </nav>
            )}
          </header>
          <main id="main">
            {crumbs.length > 0 && (
              <nav class="crumbs" aria-label="Breadcrumb">
                <ol>
                  {crumbs.map((c) => (
                    <li>
                      {c.href ? <a href={c.href}>{c.label}</a> : <span aria-current="page">{c.label}</span>}
                    </li>
                  ))}
                </ol>
              </nav>
            )}
            <h1>{title}</h1>
            {body}
          </main>
        </body>
      </html>,
    )
  );
}

export function Csrf({ ctx }: { ctx: PageContext }) {
  return <input type="hidden" name="_csrf" value={ctx.csrf} />;
}

export function Notice({ kind, children }: { kind?: 'error' | 'ok' | 'warn'; children: ComponentChildren }) {
  return (
    <div class={kind ? `notice ${kind}` : 'notice'} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

export const formatDate = (d: Date | null): string => (d === null ? '—' : d.toISOString().slice(0, 10));
export const formatTime = (d: Date | null): string =>
  d === null ? 'never' : d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
export const formatCount = (n: number): string => n.toLocaleString('en-US');
