/** Requests allowed in any window of `windowSeconds`; 0 requests means no limit. */
export interface Limit {
  requests: number;
  windowSeconds: number;
}

/** What one instance reports of a key in one slot: the requests it admitted there. */
export interface WindowCount {
  key: string;
  /** Length of the limit's window, milliseconds: the slot is a tenth of it (`slotMsOf`). */
  windowMs: number;
  /** Start of the slot, epoch milliseconds (a multiple of the slot length). */
  start: number;
  count: number;
}

export interface Verdict {
  allowed: boolean;
  /** Requests left as far as this instance knows (never negative). */
  remaining: number;
  /** Milliseconds until a request would be admitted again (refused), or until the oldest counted one stops counting. */
  resetMs: number;
}

/**
 * Share of a key's limit this instance may admit between two exchanges before it asks for the next one at once: what
 * the others cannot have seen of it, so what they may over-admit on its account.
 */
const UNSEEN_SHARE = 0.01;
/** Share of a key's limit, counting the others' last reports, from which every exchange comes at the fast pace. */
const NEAR_SHARE = 0.5;

/** Slots per window: a limit is checked against the last `SLOTS` slots plus the current one. */
const SLOTS = 10;

export const slotMsOf = (windowMs: number): number => windowMs / SLOTS;

/** When a slot's count stops counting: once the current slot is more than `SLOTS` slots after it. */
export const countedUntil = (count: Pick<WindowCount, 'windowMs' | 'start'>): number =>
  count.start + count.windowMs + slotMsOf(count.windowMs);

/** Identity of a key's slot: the same key under another window length is counted apart. */
const idOf = (key: string, windowMs: number, start: number): string => `${windowMs}:${start}:${key}`;

/**
 * Sliding-window request counts per key, shared between instances by reports rather than by a counter in the store:
 * each instance counts what it admits itself (`consume`, no I/O), hands its counts to the others (`report`), and
 * takes in the sum of theirs (`absorb`).
 *
 * A window of length W is cut into slots of W / 10, aligned on the epoch (so instances agree on them without talking,
 * to within their clock skew). A request is admitted while the requests counted in the current slot and the 10 before
 * it stay under the limit. Any window of length W lies within the 11 slots that end with the slot of its last request,
 * all of which that request's check counted: so no window of length W ever holds more than the limit (a fixed window
 * admitted twice the limit across a boundary). The price: a client sending steadily at the limit's rate gets about
 * 10/11 of it.
 *
 * Across instances, a request is admitted while this instance's own counts plus the others' last reported counts are
 * under the limit, so between two exchanges the instances together may admit more than the limit: at most what the
 * others admitted since their counts were last absorbed here.
 */
export class WindowCounter {
  private readonly own = new Map<string, WindowCount>();
  private others = new Map<string, number>();
  private admitted = 0;
  /** Requests admitted per key since the last `report`. */
  private readonly unreported = new Map<string, number>();
  private urgent = false;

  /** Admits and counts one request of `key`, or refuses it (refusals are not counted). */
  consume(key: string, limit: Limit, now: number): Verdict {
    const windowMs = limit.windowSeconds * 1000;
    const slotMs = slotMsOf(windowMs);
    const current = Math.floor(now / slotMs) * slotMs;
    /** Counts of the slots checked, oldest first. */
    const slots: number[] = [];
    let used = 0;
    for (let i = SLOTS; i >= 0; i--) {
      const id = idOf(key, windowMs, current - i * slotMs);
      const count = (this.own.get(id)?.count ?? 0) + (this.others.get(id) ?? 0);
      slots.push(count);
      used += count;
    }
    /** Until the oldest slot with a count leaves the checked range; the whole window when nothing is counted. */
    const leaves = (index: number) => current + (index + 1) * slotMs - now;
    if (used >= limit.requests) {
      // Refused until enough of the oldest slots have left for one more request to fit.
      let left = used;
      let index = 0;
      while (index < slots.length - 1 && left >= limit.requests) left -= slots[index++]!;
      return { allowed: false, remaining: 0, resetMs: left < limit.requests ? leaves(index - 1) : leaves(SLOTS) };
    }
    const id = idOf(key, windowMs, current);
    let entry = this.own.get(id);
    if (!entry) {
      entry = { key, windowMs, start: current, count: 0 };
      this.own.set(id, entry);
    }
    entry.count += 1;
    this.admitted += 1;
    const unreported = (this.unreported.get(key) ?? 0) + 1;
    this.unreported.set(key, unreported);
    if (unreported >= UNSEEN_SHARE * limit.requests || used + 1 >= NEAR_SHARE * limit.requests) this.urgent = true;
    const oldest = slots.findIndex((count) => count > 0);
    return {
      allowed: true,
      remaining: limit.requests - used - 1,
      resetMs: leaves(oldest === -1 ? SLOTS : oldest),
    };
  }

  /**
   * This instance's counts in slots still counted, largest first and at most `max` of them (a count left out is not
   * seen by the others: its key may be over-admitted by up to that count). Slots no longer counted are forgotten.
   */
  report(now: number, max = Number.POSITIVE_INFINITY): WindowCount[] {
    this.unreported.clear();
    this.urgent = false;
    for (const [id, entry] of this.own) if (countedUntil(entry) <= now) this.own.delete(id);
    const counts = [...this.own.values()].map((entry) => ({ ...entry }));
    if (counts.length > max) counts.sort((a, b) => b.count - a.count).splice(max);
    return counts;
  }

  /**
   * Whether the next exchange should come now rather than at the relaxed pace: since the last `report`, a key admitted
   * UNSEEN_SHARE of its limit here, or a request found its key at NEAR_SHARE of its limit (the others' counts included).
   * While neither holds, what the others have not seen of this instance is under UNSEEN_SHARE of each key's limit.
   */
  get exchangeDue(): boolean {
    return this.urgent;
  }

  /** Requests admitted here so far, ever: a report is due when it moved since the last one. */
  get version(): number {
    return this.admitted;
  }

  /** Replaces what the other instances reported with `counts` (theirs only; slots no longer counted are dropped). */
  absorb(counts: Iterable<WindowCount>, now: number): void {
    const others = new Map<string, number>();
    for (const count of counts) {
      if (countedUntil(count) <= now) continue;
      const id = idOf(count.key, count.windowMs, count.start);
      others.set(id, (others.get(id) ?? 0) + count.count);
    }
    this.others = others;
  }
}
