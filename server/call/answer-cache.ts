/**
 * An operation's answer, encoded: the query layer's plain object as JSON parts (json.ts), for
 * lookup_asn its large first pages kept per release (see LOOKUP_ASN_KEPT_ANSWERS), and for
 * lookup_ip the answers kept per release (those asked lately, see RecentCache): a lookup_ip
 * answer depends only on the release and the address, and a popular address is asked again and
 * again. A kept answer is its head as UTF-8 (0.5–1.7 KB on the full-scale release; the release
 * blocks are shared), so the LOOKUP_IP_KEPT_ANSWERS answers stay under 32 MB. An answer is kept
 * only when its address is asked a second time while the last LOOKUP_IP_ADMISSION addresses missed
 * are remembered: traffic spread over many addresses then adds no garbage.
 */
import type { CallArguments, Operation, RunContext } from '../../shared/operations.js';
import { hashText } from '../../shared/hash.js';
import { RecentCache, perRelease } from '../../shared/queries/common.js';
import { DEFAULT_LIMIT } from '../../shared/queries/paging.js';
import type { Release } from '../../shared/queries/index.js';
import { responseParts, type ResponseJson } from '../encoding/json.js';

export interface Answer {
  /** Shared between callers when `kept`: none of it may be changed. */
  readonly json: ResponseJson;
  /** False: not counted (a bogon lookup_ip). */
  readonly billable: boolean;
  /** The response object, when the caller asked for it (the MCP SDK path's structuredContent). */
  readonly value?: object;
  /** True: a kept answer, the same object for every call of the address while it is kept. */
  readonly kept?: boolean;
}

const LOOKUP_IP_KEPT_ANSWERS = 16_384;
const LOOKUP_IP_ADMISSION = 8192;
/** The bits of each generation of the lookup_ip admission filter (a power of two). */
const ADMISSION_BITS = 65_536;

/**
 * lookup_asn first pages kept per release: only those with at least LOOKUP_ASN_KEPT_MIN_RANGES
 * ranges, whose formatting (CIDRs, texts, JSON) costs ten to a hundred times a small one's. On the
 * full-scale release 2,031 of 94,533 routed AS numbers have as many; a kept page is at most about
 * 10 KB (100 ranges), so the LOOKUP_ASN_KEPT_ANSWERS stay under 10 MB and small pages add nothing.
 */
const LOOKUP_ASN_KEPT_ANSWERS = 1024;
const LOOKUP_ASN_KEPT_MIN_RANGES = 16;

interface AnswerCache {
  answers: RecentCache<string, Answer>;
  /** Addresses asked once recently (the admission filter). */
  asked: AskedOnce;
}

/**
 * The admission filter of the kept lookup_ip answers: remembers the addresses asked recently, as two
 * bits of a 32-bit hash (FNV-1a) in a bit set of 65,536, in two generations of up to
 * LOOKUP_IP_ADMISSION / 2 addresses each (the older one is cleared and reused when the newer one is
 * full), like the maps of addresses it replaces. Nothing is allocated per request: a map of the
 * addresses themselves kept every address of a cache-missing load alive long enough to be moved to
 * the old generation, to be collected there. An address whose two bits others set is kept on its
 * first request (at most about 1 in 40, computed for two full generations), which costs only the
 * room of a kept answer.
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
    if (this.added >= LOOKUP_IP_ADMISSION / 2) {
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

/** The answer for the response object `value` of `op`. */
function answerFor(op: Operation, value: object): Answer {
  return { json: responseParts(value), billable: op.billable(value) };
}

function fresh(op: Operation, args: CallArguments, context: RunContext, withValue: boolean): Answer {
  const value = op.run(args, context);
  const answer = answerFor(op, value);
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
  const release = context.release;
  if (op.id === 'lookup_asn' && !withValue && release !== null) return asnAnswer(op, args, context, release);
  if (op.id !== 'lookup_ip' || withValue || release === null || args.ip === undefined) {
    return fresh(op, args, context, withValue);
  }
  const cache = perRelease<AnswerCache>(release, 'lookup_ip answers', () => ({
    answers: new RecentCache(LOOKUP_IP_KEPT_ANSWERS / 2),
    asked: new AskedOnce(),
  }));
  const hit = cache.answers.get(args.ip);
  if (hit !== undefined) return hit;
  const answer = fresh(op, args, context, false);
  if (!cache.asked.seen(args.ip)) return answer;
  const keep = keptAnswer(answer);
  cache.answers.set(args.ip, keep);
  return keep;
}

/**
 * lookup_asn: a first page of the default size (the plan's, when smaller) is kept when it is large;
 * an answer depends only on the release, the AS number and the page size.
 */
function asnAnswer(op: Operation, args: CallArguments, context: RunContext, release: Release): Answer {
  if (args.asn === undefined || args.limit !== undefined || args.cursor !== undefined) {
    return fresh(op, args, context, false);
  }
  // The page size the caller's plan gives (the same call the lookup makes: the envelope sees it).
  const size = context.pageSize(DEFAULT_LIMIT);
  const key = `${args.asn}\0${size}`;
  const kept = perRelease(
    release,
    'lookup_asn answers',
    () => new RecentCache<string, Answer>(LOOKUP_ASN_KEPT_ANSWERS / 2),
  );
  const hit = kept.get(key);
  if (hit !== undefined) return hit;
  const value = op.run(args, context) as { ranges?: unknown[] };
  const answer = answerFor(op, value);
  // A large page, or a full one where the plan's pages are smaller.
  if ((value.ranges?.length ?? 0) < Math.min(LOOKUP_ASN_KEPT_MIN_RANGES, size)) return answer;
  const keep = keptAnswer(answer);
  kept.set(key, keep);
  return keep;
}
