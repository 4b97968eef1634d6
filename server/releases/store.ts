/**
 * The release the server answers from, and the swap to a newer one without dropping a request
 * (docs/decisions/0003-release-file.md).
 *
 * `releases/CURRENT` holds `<id>.sqlite`. The store reads it at start and every poll; when it names
 * another file (or the same name now is another file: new inode, size or mtime) the store opens it
 * with `openRelease` (read-only, checked) and swaps the reference in one assignment. The old handle
 * is closed after a grace period, so a request that took it just before the swap never reads a
 * closed handle. A target that cannot be opened or checked is refused: the old release stays, the
 * refusal is remembered (health reports it) and the same target is not retried until CURRENT or
 * the file changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { openRelease, warmLookupIp, type Release } from '../../shared/queries/index.js';
import { nowEpoch } from '../../shared/time.js';

export const CURRENT_FILE = 'CURRENT';
/** How long a replaced release stays open for requests that still hold it. */
export const DEFAULT_GRACE_MS = 5_000;

/** The release block of GET /health. */
export interface ReleaseHealth {
  status: 'ok' | 'unavailable';
  id: string | null;
  built_at: string | null;
  age_seconds: number | null;
  /** Why no release is loaded, or why the newer target of CURRENT was refused. */
  error?: string;
}

/** What the routes need: the release to answer from (null: none loaded) and its health. */
export interface ReleaseSource {
  current(): Release | null;
  health(): ReleaseHealth;
}

export interface ReleaseStoreLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ReleaseStoreOptions {
  dir: string;
  pollMs: number;
  graceMs?: number;
  log?: ReleaseStoreLogger;
  /** Seam for tests; defaults to openRelease. */
  open?: (file: string) => Release;
  /**
   * 'poll' (default): the store reads CURRENT every pollMs and swaps by itself. 'manual': only at
   * start; afterwards the owner calls stage() and swapStaged() (the workers of a cluster, so that
   * all of them swap together: server/cluster/).
   */
  follow?: 'poll' | 'manual';
}

interface Target {
  name: string;
  /** Identity of the file behind the name: a replaced file is another target. */
  fingerprint: string;
}

const SILENT: ReleaseStoreLogger = { info() {}, warn() {}, error() {} };

export class ReleaseStore implements ReleaseSource {
  readonly dir: string;
  private readonly pollMs: number;
  private readonly graceMs: number;
  private readonly log: ReleaseStoreLogger;
  private readonly open: (file: string) => Release;
  private readonly follow: 'poll' | 'manual';
  private release: Release | null = null;
  /** A newer release opened and checked by stage(), served from swapStaged() on. */
  private staged: { release: Release; target: Target } | null = null;
  private loaded: Target | null = null;
  /** The last target that failed, so the same broken file is not reopened every poll. */
  private refused: (Target & { error: string }) | null = null;
  /** Why CURRENT itself cannot be read (missing, malformed, names a missing file). */
  private pointerError: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly retiring = new Set<{ release: Release; timer: NodeJS.Timeout }>();
  private closed = false;

  constructor(options: ReleaseStoreOptions) {
    this.dir = options.dir;
    this.pollMs = options.pollMs;
    this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    this.log = options.log ?? SILENT;
    this.open = options.open ?? ((file) => openRelease(file));
    this.follow = options.follow ?? 'poll';
  }

  /** Loads the current release now and then polls CURRENT every pollMs. */
  start(): this {
    this.check();
    if (this.follow === 'poll' && this.timer === null && !this.closed) {
      this.timer = setInterval(() => this.check(), this.pollMs);
      this.timer.unref();
    }
    return this;
  }

  current(): Release | null {
    return this.release;
  }

  /** Reads CURRENT and swaps to its target when it changed. Synchronous; safe to call any time. */
  check(): void {
    if (this.stage() !== null) this.swapStaged();
  }

  /**
   * Reads CURRENT and, when it names another release, opens and checks it without serving it yet.
   * Returns the id of the release waiting for swapStaged(), or null when there is none.
   */
  stage(): string | null {
    if (this.closed) return null;
    const target = this.readTarget();
    if (target === null) return null;
    if (this.staged && sameTarget(this.staged.target, target)) return this.staged.release.id;
    this.dropStaged();
    if (this.loaded && sameTarget(this.loaded, target)) {
      this.refused = null;
      return null;
    }
    if (this.refused && sameTarget(this.refused, target)) return null;
    const file = path.join(this.dir, target.name);
    let next: Release;
    try {
      next = this.open(file);
    } catch (err) {
      const error = `release ${target.name} refused: ${(err as Error).message}`;
      this.refused = { ...target, error };
      this.log.error(
        { release: target.name, serving: this.release?.id ?? null },
        `${error}; ${this.release ? `still serving ${this.release.id}` : 'no release is served'}`,
      );
      return null;
    }
    this.staged = { release: next, target };
    return next.id;
  }

  /** Serves the release stage() opened (nothing when none is waiting). */
  swapStaged(): void {
    const staged = this.staged;
    if (staged === null || this.closed) return;
    this.staged = null;
    const next = staged.release;
    const previous = this.release;
    this.release = next;
    this.loaded = staged.target;
    this.refused = null;
    this.log.info({ release: next.id, previous: previous?.id ?? null }, `serving release ${next.id}`);
    if (previous) this.retire(previous);
    // Range tables move into memory in the background; until then lookups use SQL seeks.
    const started = Date.now();
    warmLookupIp(next).then(
      () => this.log.info({ release: next.id, ms: Date.now() - started }, 'range tables loaded into memory'),
      (err: Error) => {
        if (next.db.open) this.log.warn({ release: next.id, err: err.message }, 'range tables not loaded');
      },
    );
  }

  private dropStaged(): void {
    this.staged?.release.close();
    this.staged = null;
  }

  health(now: number = nowEpoch()): ReleaseHealth {
    const release = this.release;
    const error = this.refused?.error ?? this.pointerError ?? undefined;
    const block: ReleaseHealth = release
      ? {
          status: 'ok',
          id: release.id,
          built_at: release.builtAt,
          age_seconds: Math.max(0, now - release.builtAtEpoch),
        }
      : { status: 'unavailable', id: null, built_at: null, age_seconds: null };
    if (error !== undefined) block.error = error;
    else if (!release) block.error = `no release loaded from ${this.dir}`;
    return block;
  }

  /** Stops polling and closes every handle (after the server stopped taking requests). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const entry of this.retiring) {
      clearTimeout(entry.timer);
      entry.release.close();
    }
    this.retiring.clear();
    this.dropStaged();
    this.release?.close();
    this.release = null;
  }

  private retire(release: Release): void {
    const entry = {
      release,
      timer: setTimeout(() => {
        this.retiring.delete(entry);
        release.close();
      }, this.graceMs),
    };
    entry.timer.unref();
    this.retiring.add(entry);
  }

  /** The file CURRENT names, with its identity; null (and pointerError set) when there is none. */
  private readTarget(): Target | null {
    const pointer = path.join(this.dir, CURRENT_FILE);
    let name: string;
    try {
      name = fs.readFileSync(pointer, 'utf8').trim();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return this.noTarget(
        code === 'ENOENT'
          ? `${pointer} does not exist: publish a release with "npx builder release" (or point RELEASES_DIR at a releases directory)`
          : `cannot read ${pointer}: ${(err as Error).message}`,
      );
    }
    // Only a plain file name inside the releases directory: CURRENT never points elsewhere.
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*\.sqlite$/.test(name)) {
      return this.noTarget(
        `${pointer} holds ${JSON.stringify(name.slice(0, 100))}, not a release file name like 20261001T000000Z.sqlite`,
      );
    }
    let stat: fs.Stats;
    try {
      stat = fs.statSync(path.join(this.dir, name));
    } catch (err) {
      return this.noTarget(`${pointer} names ${name}, which cannot be read: ${(err as Error).message}`);
    }
    this.pointerError = null;
    return { name, fingerprint: `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}` };
  }

  private noTarget(error: string): null {
    if (error !== this.pointerError) {
      this.log.warn(
        { serving: this.release?.id ?? null },
        `${error}${this.release ? `; still serving ${this.release.id}` : ''}`,
      );
    }
    this.pointerError = error;
    return null;
  }
}

function sameTarget(a: Target, b: Target): boolean {
  return a.name === b.name && a.fingerprint === b.fingerprint;
}
