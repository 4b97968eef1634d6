/**
 * An operation's answer, encoded: the query layer's plain object as JSON parts (encoding/json.ts),
 * kept for the rest of the release when the operation's `answerCache` (shared/operations.ts) says
 * so: an answer that depends only on the release and a key is found again without the lookup and
 * without its encoding. A kept answer is its head as UTF-8 (the release blocks are shared), in a
 * RecentCache of the release. With `asked-twice` admission an answer is kept only when its key was
 * asked while the last 8,192 keys that missed were remembered: traffic spread over many keys then
 * adds no garbage. An operation that can write an answer's head without building it (its `head`:
 * lookup_ip, docs/decisions/0038) is asked after the kept answers and before `run`; such an answer
 * is cheap to write again and is not kept.
 */
import { runInRelease, type Operation, type RunContext } from '../../shared/operations.js';
import type { CallArguments } from '../../shared/parameters.js';
import { hashText } from '../../shared/hash.js';
import { RecentCache } from '../../shared/queries/common.js';
import { ReleaseSlot, type Release } from '../../shared/queries/release.js';
import { releaseParts, responseParts, type ResponseJson } from '../encoding/json.js';

export interface Answer {
  /** Shared between callers when `kept`: none of it may be changed. */
  readonly json: ResponseJson;
  /** False: not counted (a bogon lookup_ip). */
  readonly billable: boolean;
  /** The response object, when the caller asked for it (the MCP SDK path's structuredContent). */
  readonly value?: object;
  /** True: a kept answer, the same object for every call of its key while it is kept. */
  readonly kept?: boolean;
}

/** Keys remembered by the admission filter (two generations of half as many). */
const ADMISSION_KEYS = 8192;
/** The bits of each generation of the admission filter (a power of two). */
const ADMISSION_BITS = 65_536;

/**
 * The admission filter of `asked-twice` caching: remembers the keys asked recently, as two bits of a
 * 32-bit hash (FNV-1a) in a bit set of 65,536, in two generations of up to ADMISSION_KEYS / 2 keys
 * each (the older one is cleared and reused when the newer one is full). Nothing is allocated per
 * request: a map of the keys themselves kept every key of a cache-missing load alive long enough to
 * be moved to the old generation, to be collected there. A key whose two bits others set is kept
 * on its first request (at most about 1 in 40, computed for two full generations), which costs
 * only the room of a kept answer.
 */
class AskedOnce {
  private newer = new Uint32Array(ADMISSION_BITS / 32);
  private older = new Uint32Array(ADMISSION_BITS / 32);
  private added = 0;

  /** Whether `key` was asked recently; remembers it. */
  seen(key: string): boolean {
    const h = hashText(key);
    const a = h & (ADMISSION_BITS - 1);
    const b = (h >>> 16) & (ADMISSION_BITS - 1);
    if (hasBoth(this.newer, a, b) || hasBoth(this.older, a, b)) return true;
    if (this.added >= ADMISSION_KEYS / 2) {
      const cleared = this.older.fill(0);
      this.older = this.newer;
      this.newer = cleared;
      this.added = 0;
    }
    this.newer[a >>> 5]! |= 1 << (a & 31);
    this.newer[b >>> 5]! |= 1 << (b & 31);
    this.added += 1;
    return false;
  }
}

function hasBoth(bits: Uint32Array, a: number, b: number): boolean {
  return (bits[a >>> 5]! & (1 << (a & 31))) !== 0 && (bits[b >>> 5]! & (1 << (b & 31))) !== 0;
}

/** One operation's kept answers in one release. */
interface KeptAnswers {
  answers: RecentCache<string, Answer>;
  /** The admission filter of `asked-twice` caching; null: `always`. */
  asked: AskedOnce | null;
}

/** Per release, the kept answers of each operation that keeps any. */
const KEPT = new ReleaseSlot('kept answers', () => new Map<Operation, KeptAnswers>());

function keptOf(release: Release, op: Operation): KeptAnswers {
  const all = KEPT.of(release);
  let kept = all.get(op);
  if (kept === undefined) {
    const policy = op.answerCache!;
    kept = {
      answers: new RecentCache(policy.entries / 2),
      asked: policy.admission === 'asked-twice' ? new AskedOnce() : null,
    };
    all.set(op, kept);
  }
  return kept;
}

/** The answer for the response object `value` of `op` (never kept); `withValue`: carrying it. */
export function answerFor(op: Operation, value: object, withValue = false): Answer {
  const answer = { json: responseParts(value), billable: op.billable(value) };
  return withValue ? { ...answer, value } : answer;
}

/** The answer to keep: its head as UTF-8 in a buffer of its own (a pooled slice would pin its slab). */
function keptAnswer(answer: Answer): Answer {
  const text = answer.json.head as string;
  const head = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  head.write(text);
  return { json: { head, blocks: answer.json.blocks }, billable: answer.billable, kept: true };
}

/**
 * The operation's answer for `args`. Errors (ApiError) are thrown as the query layer throws them
 * and never kept. `withValue`: the answer carries the response object (never a kept answer).
 */
export function answerOf(op: Operation, args: CallArguments, context: RunContext, withValue = false): Answer {
  const policy = op.answerCache;
  const release = context.release;
  const key = policy === undefined || withValue || release === null ? null : policy.key(args, context);
  const kept = key === null ? null : keptOf(release!, op);
  if (kept !== null) {
    const hit = kept.answers.get(key!);
    if (hit !== undefined) return hit;
  }
  // Written without building the answer when the operation can (docs/decisions/0038).
  const head = withValue || release === null || op.head === undefined ? null : op.head(args, context);
  if (head !== null) return { json: releaseParts(head, release!), billable: true };
  if (kept === null) return answerFor(op, runInRelease(op, args, context), withValue);
  const value = runInRelease(op, args, context);
  const answer = answerFor(op, value);
  if (kept.asked !== null && !kept.asked.seen(key!)) return answer;
  if (!policy!.worthKeeping(value, context)) return answer;
  const keep = keptAnswer(answer);
  kept.answers.set(key!, keep);
  return keep;
}
