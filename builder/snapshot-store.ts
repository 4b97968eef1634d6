/**
 * The on-disk store of downloaded feed snapshots, one directory per source:
 *
 *   <stateDir>/snapshots/<source>/current.json                 the manifest (SnapshotManifest)
 *   <stateDir>/snapshots/<source>/<sha256-first-16>-<name>     the raw files, bytes as downloaded
 *
 * Raw files are content-addressed and never modified. A new snapshot is published by writing
 * its new raw files (temp name, fsync, rename), then the manifest (temp name, fsync, rename,
 * fsync of the directory); raw files the new manifest no longer names are removed only after
 * that swap. A crash at any point therefore leaves either the old or the new manifest, each
 * naming files that are all present; leftovers are cleaned by the next commit.
 *
 * Not handled: two processes committing the same source at the same time (run one `builder
 * fetch` per state directory).
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';

export const SNAPSHOT_FORMAT_VERSION = 1;
export const MANIFEST_FILE_NAME = 'current.json';

const RAW_FILE_RE = /^[0-9a-f]{16}-/;
const TEMP_PREFIX = '.tmp-';
const SOURCE_NAME_RE = /^[a-z0-9][a-z0-9_.-]*$/i;

const snapshotFileSchema = z.object({
  /** The URL the file was requested from (before redirects). */
  url: z.string(),
  /** File name inside the source's snapshot directory: `<sha256-first-16>-<original name>`. */
  file: z.string().regex(/^[0-9a-f]{16}-[A-Za-z0-9._-]+$/),
  /** SHA-256 (hex) of the bytes as downloaded (still gzipped for a .gz feed). */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().nonnegative(),
  etag: z.string().optional(),
  lastModified: z.string().optional(),
  /** When these bytes were downloaded (a later 304 or identical download keeps it). */
  fetchedAt: z.string(),
  /** Records and rejected rows `source.parse` produced when the file was accepted. */
  records: z.number().int().nonnegative(),
  rejected: z.number().int().nonnegative(),
  /** The publisher's own snapshot time, when the file carries one. */
  publishedAt: z.string().optional(),
});

const snapshotManifestSchema = z.object({
  formatVersion: z.literal(SNAPSHOT_FORMAT_VERSION),
  source: z.string(),
  /** When the current set of bytes was downloaded (unchanged by not-modified checks). */
  fetchedAt: z.string(),
  /** When the publisher last confirmed the set (a 304 or identical bytes) or sent it. */
  checkedAt: z.string(),
  records: z.number().int().nonnegative(),
  rejected: z.number().int().nonnegative(),
  /** The latest publishedAt of the files, when any carries one. */
  publishedAt: z.string().optional(),
  /**
   * Addresses the records cover, IPv4 and IPv6 (IPv6 as decimal text), for the quality gate
   * (coverage.ts). Manifests written before it have none: the files are parsed again when needed.
   */
  coverage: z.object({ ipv4: z.number().int().nonnegative(), ipv6: z.string().regex(/^\d+$/) }).optional(),
  files: z.array(snapshotFileSchema).min(1),
});

export type SnapshotFile = z.infer<typeof snapshotFileSchema>;
export type SnapshotManifest = z.infer<typeof snapshotManifestSchema>;

/** Steps of commitSnapshot, reported to `onStep` (a seam for crash tests). */
export type CommitStep = 'raw_files_written' | 'manifest_written' | 'manifest_renamed' | 'cleaned';

export interface CommitOptions {
  onStep?: (step: CommitStep) => void;
  log?: (line: string) => void;
}

export function snapshotDir(stateDir: string, sourceName: string): string {
  if (!SOURCE_NAME_RE.test(sourceName)) {
    throw new Error(`invalid source name "${sourceName}": use letters, digits, ".", "_" and "-"`);
  }
  return path.join(stateDir, 'snapshots', sourceName);
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The last path segment of a URL, reduced to [A-Za-z0-9._-] (`index` when there is none). */
export function originalFileName(url: string): string {
  let segment = '';
  try {
    segment = new URL(url).pathname.split('/').pop() ?? '';
    segment = decodeURIComponent(segment);
  } catch {
    // keep what we have; a malformed URL fails later with a clearer message
  }
  const cleaned = segment.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '');
  return cleaned.slice(-100) || 'index';
}

/** `<sha256-first-16>-<original file name>`. */
export function rawFileName(sha256: string, url: string): string {
  return `${sha256.slice(0, 16)}-${originalFileName(url)}`;
}

/** True for a URL whose path ends in `.gz` or bytes that start with the gzip magic number. */
export function isGzip(url: string, bytes: Uint8Array): boolean {
  let pathname = url;
  try {
    pathname = new URL(url).pathname;
  } catch {
    // fall back to the raw text
  }
  return pathname.toLowerCase().endsWith('.gz') || (bytes[0] === 0x1f && bytes[1] === 0x8b);
}

/**
 * The text of a feed file as its parser reads it: gunzipped when `isGzip`, decoded as UTF-8
 * (a BOM is dropped, invalid sequences become U+FFFD). Throws on invalid gzip.
 */
export function decodeFeedBytes(url: string, bytes: Uint8Array, maxOutputLength?: number): string {
  const plain = isGzip(url, bytes)
    ? gunzipSync(bytes, maxOutputLength === undefined ? {} : { maxOutputLength })
    : bytes;
  return new TextDecoder('utf-8').decode(plain);
}

/**
 * The source's current manifest, or null when it has none. Throws (naming the file and how to
 * recover) when the manifest exists but is not one this code understands.
 */
export function readSnapshot(stateDir: string, sourceName: string): SnapshotManifest | null {
  const file = path.join(snapshotDir(stateDir, sourceName), MANIFEST_FILE_NAME);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(
      `${file} is not valid JSON (${(error as Error).message}); delete it to fetch the source again`,
    );
  }
  const parsed = snapshotManifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'manifest';
    throw new Error(
      `${file} is not a snapshot manifest of format ${SNAPSHOT_FORMAT_VERSION} (${where}: ${issue?.message}); delete it to fetch the source again`,
    );
  }
  if (parsed.data.source !== sourceName) {
    throw new Error(`${file} describes source "${parsed.data.source}", not "${sourceName}"`);
  }
  return parsed.data;
}

/** Absolute paths of the manifest's raw files, in manifest order. */
export function snapshotFilePaths(
  stateDir: string,
  manifest: SnapshotManifest,
): (SnapshotFile & { path: string })[] {
  const dir = snapshotDir(stateDir, manifest.source);
  return manifest.files.map((file) => ({ ...file, path: path.join(dir, file.file) }));
}

/** The raw bytes of one snapshot file, checked against the manifest's sha256. */
export function readSnapshotFile(stateDir: string, manifest: SnapshotManifest, file: SnapshotFile): Buffer {
  const filePath = path.join(snapshotDir(stateDir, manifest.source), file.file);
  const bytes = fs.readFileSync(filePath);
  const actual = sha256Hex(bytes);
  if (actual !== file.sha256) {
    throw new Error(
      `${filePath} has sha256 ${actual}, the manifest says ${file.sha256}; run "builder fetch ${manifest.source}" again`,
    );
  }
  return bytes;
}

/** The parser's text of one snapshot file (checked, gunzipped, decoded): what fetch parsed. */
export function readSnapshotText(stateDir: string, manifest: SnapshotManifest, file: SnapshotFile): string {
  return decodeFeedBytes(file.url, readSnapshotFile(stateDir, manifest, file));
}

/** True when the raw file is present with the manifest's sha256 (used before sending If-None-Match). */
export function snapshotFileIntact(
  stateDir: string,
  manifest: SnapshotManifest,
  file: SnapshotFile,
): boolean {
  try {
    readSnapshotFile(stateDir, manifest, file);
    return true;
  } catch {
    return false;
  }
}

function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch (error) {
    // Some platforms (Windows) cannot open or fsync a directory; the renames still happened.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL') throw error;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** mkdir -p that fsyncs each parent whose entry it created. */
function ensureDirectory(dir: string): void {
  if (fs.existsSync(dir)) return;
  ensureDirectory(path.dirname(dir));
  try {
    fs.mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  fsyncDirectory(path.dirname(dir));
}

function tempName(finalName: string): string {
  return `${TEMP_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}-${finalName}`;
}

/** Writes bytes to `<dir>/<name>` via a temp file, fsync and rename. */
function writeFileAtomically(dir: string, name: string, bytes: Uint8Array): void {
  const temp = path.join(dir, tempName(name));
  const fd = fs.openSync(temp, 'wx', 0o644);
  try {
    fs.writeFileSync(fd, bytes);
    fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  fs.renameSync(temp, path.join(dir, name));
}

/**
 * Publishes `manifest` as the source's current snapshot. `rawFiles` holds the bytes of files the
 * manifest names that may not be on disk yet (file name → bytes); files already present with the
 * same content-addressed name are not rewritten. Every file the manifest names must end up present.
 */
export function commitSnapshot(
  stateDir: string,
  manifest: SnapshotManifest,
  rawFiles: ReadonlyMap<string, Uint8Array>,
  options: CommitOptions = {},
): void {
  const checked = snapshotManifestSchema.parse(manifest);
  const dir = snapshotDir(stateDir, checked.source);
  ensureDirectory(dir);

  for (const [name, bytes] of rawFiles) {
    const entry = checked.files.find((f) => f.file === name);
    if (!entry) continue; // not part of this snapshot
    if (sha256Hex(bytes) !== entry.sha256) throw new Error(`bytes for ${name} do not match its sha256`);
    if (fs.existsSync(path.join(dir, name)) && snapshotFileIntact(stateDir, checked, entry)) continue;
    writeFileAtomically(dir, name, bytes);
  }
  for (const entry of checked.files) {
    if (!fs.existsSync(path.join(dir, entry.file))) {
      throw new Error(
        `${path.join(dir, entry.file)} is missing; it must be written before the manifest names it`,
      );
    }
  }
  fsyncDirectory(dir);
  options.onStep?.('raw_files_written');

  const manifestTemp = tempName(MANIFEST_FILE_NAME);
  const manifestTempPath = path.join(dir, manifestTemp);
  const fd = fs.openSync(manifestTempPath, 'wx', 0o644);
  try {
    fs.writeFileSync(fd, `${JSON.stringify(checked, null, 2)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  options.onStep?.('manifest_written');
  fs.renameSync(manifestTempPath, path.join(dir, MANIFEST_FILE_NAME));
  fsyncDirectory(dir);
  options.onStep?.('manifest_renamed');

  removeUnreferencedFiles(dir, new Set(checked.files.map((f) => f.file)), options.log);
  options.onStep?.('cleaned');
}

/** Removes raw files and temp files the current manifest does not name. Failures are logged. */
function removeUnreferencedFiles(dir: string, keep: ReadonlySet<string>, log?: (line: string) => void): void {
  for (const name of fs.readdirSync(dir)) {
    if (keep.has(name) || name === MANIFEST_FILE_NAME) continue;
    if (!RAW_FILE_RE.test(name) && !name.startsWith(TEMP_PREFIX)) continue;
    try {
      fs.rmSync(path.join(dir, name), { force: true });
    } catch (error) {
      log?.(`could not remove ${path.join(dir, name)}: ${(error as Error).message}`);
    }
  }
}
