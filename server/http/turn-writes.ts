/**
 * Responses written at the end of the event-loop turn that produced them (docs/decisions/
 * 0023-turn-writes.md). The server answers many requests per turn (one per readable socket);
 * written one by one, each response wakes the client's reading thread on its own, and on loopback
 * (a reverse proxy or a load generator on the same machine) the server pays for each wake-up inside
 * its writev (measured: 13 µs of 25 µs per response). Written back to back at the end of the turn
 * (setImmediate runs right after the poll phase's I/O callbacks), one wake-up serves several.
 * At most MAX_WAITING wait at once, which bounds the delay a response can take from the turn's
 * later requests.
 */

/** Responses waiting at most: more are written at once, in order. */
const MAX_WAITING = 64;

export interface TurnWrites {
  /** Runs `write` at the end of this turn (or now, when MAX_WAITING are waiting). */
  add(write: () => void): void;
}

export function createTurnWrites(): TurnWrites {
  let waiting: Array<() => void> = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const list = waiting;
    waiting = [];
    // Each write catches its own errors (a failed write must not lose the others).
    for (let i = 0; i < list.length; i++) list[i]!();
  };
  return {
    add(write) {
      waiting.push(write);
      if (waiting.length >= MAX_WAITING) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
  };
}
