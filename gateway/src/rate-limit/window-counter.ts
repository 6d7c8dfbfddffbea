/** Requests allowed per fixed window; 0 requests means no limit. */
export interface Limit {
  requests: number;
  windowSeconds: number;
}

/** What one instance reports of a key in one window: the requests it admitted there. */
export interface WindowCount {
  key: string;
  windowMs: number;
  /** Start of the window, epoch milliseconds (a multiple of `windowMs`). */
  start: number;
  count: number;
}

export interface Verdict {
  allowed: boolean;
  /** Requests left in the window as far as this instance knows (never negative). */
  remaining: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
}

/** Identity of a key's window: the same key under another window length is counted apart. */
const idOf = (key: string, windowMs: number, start: number): string => `${windowMs}:${start}:${key}`;

/**
 * Fixed-window request counts per key, shared between instances by reports rather than by a counter in the store:
 * each instance counts what it admits itself (`consume`, no I/O), hands its counts to the others (`report`), and
 * takes in the sum of theirs (`absorb`). A request is admitted while this instance's own count plus the others' last
 * reported counts is under the limit, so between two exchanges the instances together may admit more than the limit:
 * at most what the others admitted since their counts were last absorbed here.
 *
 * Windows are aligned on the epoch (`start = floor(now / windowMs) * windowMs`), so instances agree on them without
 * talking, to within their clock skew.
 */
export class WindowCounter {
  private readonly own = new Map<string, WindowCount>();
  private others = new Map<string, number>();
  private admitted = 0;

  /** Admits and counts one request of `key`, or refuses it (refusals are not counted). */
  consume(key: string, limit: Limit, now: number): Verdict {
    const windowMs = limit.windowSeconds * 1000;
    const start = Math.floor(now / windowMs) * windowMs;
    const resetMs = start + windowMs - now;
    const id = idOf(key, windowMs, start);
    let entry = this.own.get(id);
    const used = (entry?.count ?? 0) + (this.others.get(id) ?? 0);
    if (used >= limit.requests) return { allowed: false, remaining: 0, resetMs };
    if (!entry) {
      entry = { key, windowMs, start, count: 0 };
      this.own.set(id, entry);
    }
    entry.count += 1;
    this.admitted += 1;
    return { allowed: true, remaining: limit.requests - used - 1, resetMs };
  }

  /**
   * This instance's counts in windows not yet ended, largest first and at most `max` of them (a count left out is
   * not seen by the others: its key may be over-admitted by up to that count). Ended windows are forgotten here.
   */
  report(now: number, max = Number.POSITIVE_INFINITY): WindowCount[] {
    for (const [id, entry] of this.own) if (entry.start + entry.windowMs <= now) this.own.delete(id);
    const counts = [...this.own.values()].map((entry) => ({ ...entry }));
    if (counts.length > max) counts.sort((a, b) => b.count - a.count).splice(max);
    return counts;
  }

  /** Requests admitted here so far, ever: a report is due when it moved since the last one. */
  get version(): number {
    return this.admitted;
  }

  /** Replaces what the other instances reported with `counts` (theirs only; ended windows are dropped). */
  absorb(counts: Iterable<WindowCount>, now: number): void {
    const others = new Map<string, number>();
    for (const { key, windowMs, start, count } of counts) {
      if (start + windowMs <= now) continue;
      const id = idOf(key, windowMs, start);
      others.set(id, (others.get(id) ?? 0) + count);
    }
    this.others = others;
  }
}
