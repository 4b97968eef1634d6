/**
 * The answer state of the synthetic names and how it changes from round to round: addresses,
 * provider moves, returns to an earlier answer, reorders, NXDOMAIN, AAAA toggles.
 */
import type { AddressDrawer } from './addresses.js';
import type { Mulberry32 } from './prng.js';
import type { Provider } from './providers.js';

interface Snapshot {
  provider: number;
  nx: boolean;
  a: string[];
  aaaa: string[];
  cnames: string[];
}

/** The answer state of one name, or of an apex and a www name that mirror each other. */
export interface Owner extends Snapshot {
  aJson: string;
  aaaaJson: string;
  cnamesJson: string;
  /** A chain owner keeps a CNAME chain into its provider. */
  chained: boolean;
  label: string;
  prev: Snapshot | null;
  changedRound: number;
  eventRound: number;
}

function jsonList(values: string[]): string {
  return values.length === 0 ? '[]' : `["${values.join('","')}"]`;
}

/** The owners' answers and their changes, from one PRNG stream (the current domain's). */
export class Owners {
  /** Changes made after round 1 (transient failures are counted by the caller). */
  readonly events = {
    addressChanges: 0,
    providerMoves: 0,
    returns: 0,
    reorders: 0,
    transientFailures: 0,
    becameNxdomain: 0,
    aaaaToggles: 0,
  };

  constructor(
    private readonly rng: Mulberry32,
    private readonly providers: Provider[],
    /** Provider indexes a www CNAME chain points into. */
    private readonly chainProviders: number[],
    private readonly drawer: AddressDrawer,
  ) {}

  private setAnswers(o: Owner, a: string[], aaaa: string[]): void {
    o.a = a;
    o.aaaa = aaaa;
    o.aJson = jsonList(a);
    o.aaaaJson = jsonList(aaaa);
  }

  private setChain(o: Owner): void {
    o.cnames = o.chained && o.provider >= 0 ? this.providers[o.provider]!.chain(o.label, this.rng) : [];
    o.cnamesJson = jsonList(o.cnames);
  }

  /** A new owner, drawn like round 1 (`aProb`: chance of an A answer; `aaaaGivenA`: of AAAA with one). */
  newOwner(
    provider: number,
    label: string,
    chained: boolean,
    nx: boolean,
    aProb: number,
    aaaaGivenA: number,
  ): Owner {
    const o: Owner = {
      provider,
      nx,
      a: [],
      aaaa: [],
      cnames: [],
      aJson: '[]',
      aaaaJson: '[]',
      cnamesJson: '[]',
      chained,
      label,
      prev: null,
      changedRound: 0,
      eventRound: 1,
    };
    if (!nx) {
      const hasA = this.rng.next() < aProb;
      const hasAaaa = this.rng.next() < (hasA ? aaaaGivenA : 0.03);
      this.setAnswers(
        o,
        hasA ? this.drawer.drawSet(provider, 4) : [],
        hasAaaa ? this.drawer.drawSet(provider, 6) : [],
      );
      this.setChain(o);
    }
    return o;
  }

  private snapshot(o: Owner): Snapshot {
    return {
      provider: o.provider,
      nx: o.nx,
      a: o.a,
      aaaa: o.aaaa,
      cnames: o.cnames,
    };
  }

  /** Applies this round's change, if any, to an owner (once per round even when shared). */
  evolve(o: Owner, round: number): void {
    if (o.eventRound === round) return;
    o.eventRound = round;
    if (o.prev && o.changedRound === round - 1 && this.rng.next() < 0.1) {
      const back = o.prev;
      o.prev = this.snapshot(o);
      if (back.provider !== o.provider) this.events.providerMoves++;
      o.provider = back.provider;
      o.nx = back.nx;
      this.setAnswers(o, back.a, back.aaaa);
      o.cnames = back.cnames;
      o.cnamesJson = jsonList(back.cnames);
      o.changedRound = round;
      this.events.returns++;
      return;
    }
    const u = this.rng.next();
    if (u < 0.03) {
      if (o.nx && this.rng.next() > 0.3) return;
      o.prev = this.snapshot(o);
      o.changedRound = round;
      this.events.addressChanges++;
      const hadA = o.a.length > 0 || o.nx;
      const hadAaaa = o.aaaa.length > 0;
      o.nx = false;
      if (this.rng.next() < 0.3) {
        const previous = o.provider;
        const pool = o.chained ? this.chainProviders : null;
        for (let i = 0; i < 8 && o.provider === previous; i++)
          o.provider = pool ? this.rng.pick(pool) : this.drawer.pickProvider();
        if (o.provider !== previous) this.events.providerMoves++;
        this.setAnswers(
          o,
          hadA ? this.drawer.drawSet(o.provider, 4) : [],
          hadAaaa ? this.drawer.drawSet(o.provider, 6) : [],
        );
        this.setChain(o);
      } else if (!hadA) {
        this.setAnswers(o, o.a, this.drawer.drawSet(o.provider, 6));
      } else {
        this.setAnswers(
          o,
          this.drawer.drawSet(o.provider, 4),
          hadAaaa && this.rng.next() < 0.5 ? this.drawer.drawSet(o.provider, 6) : o.aaaa,
        );
      }
    } else if (u < 0.065) {
      // Same addresses, another order: not a change of address.
      if (o.a.length >= 2) this.setAnswers(o, [...o.a.slice(1), o.a[0]!], o.aaaa);
      else if (o.aaaa.length >= 2) this.setAnswers(o, o.a, [...o.aaaa.slice(1), o.aaaa[0]!]);
      else return;
      this.events.reorders++;
    } else if (u < 0.0665) {
      if (o.nx) return;
      o.prev = this.snapshot(o);
      o.changedRound = round;
      o.nx = true;
      this.events.becameNxdomain++;
    } else if (u < 0.0695) {
      if (o.nx || o.a.length === 0) return;
      o.prev = this.snapshot(o);
      o.changedRound = round;
      this.setAnswers(o, o.a, o.aaaa.length > 0 ? [] : this.drawer.drawSet(o.provider, 6));
      this.events.aaaaToggles++;
    }
  }
}
