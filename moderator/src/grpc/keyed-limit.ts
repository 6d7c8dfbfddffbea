import { TenantBusyError } from '../domain/errors';

export interface KeyedRunOptions {
  /** Units of the key's capacity the task holds while it runs (at least 1; more than the capacity counts as all). */
  weight?: number;
  /** A task still waiting when the signal aborts is dropped; the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

interface Waiter {
  weight: number;
  start: () => void;
}

interface Slot {
  active: number;
  waiting: Waiter[];
}

export interface KeyedLimitOptions {
  /** Units one key's tasks may hold at once. */
  capacity: number;
  /** Tasks of one key waiting at most; more are refused with TenantBusyError. Default: no bound. */
  maxWaiting?: number;
  /**
   * When set, the capacity holds only while another key has started a task within this many milliseconds: a key
   * alone holds back nobody, so it is not held back either. Unset: the capacity always holds.
   */
  sharedWindowMs?: number;
}

/**
 * A weighted semaphore per key (a tenant): tasks of one key hold at most `capacity` units at once, in arrival order
 * (a heavy task at the head is not overtaken by lighter ones behind it); at most `maxWaiting` wait, more are refused
 * with TenantBusyError. A key's entry is dropped when idle, so the map holds only busy keys.
 */
export class KeyedLimit {
  private readonly slots = new Map<string, Slot>();
  /** When each key last started a task (sharedWindowMs only; entries older than the window are dropped). */
  private readonly lastStart = new Map<string, number>();
  private readonly capacity: number;
  private readonly maxWaiting: number;
  private readonly sharedWindowMs: number | undefined;

  constructor(options: KeyedLimitOptions) {
    this.capacity = options.capacity;
    this.maxWaiting = options.maxWaiting ?? Number.POSITIVE_INFINITY;
    this.sharedWindowMs = options.sharedWindowMs;
  }

  async run<T>(key: string, task: () => Promise<T>, options: KeyedRunOptions = {}): Promise<T> {
    const { signal } = options;
    signal?.throwIfAborted();
    const weight = Math.min(this.capacity, Math.max(1, Math.ceil(options.weight ?? 1)));
    let slot = this.slots.get(key);
    if (!slot) {
      slot = { active: 0, waiting: [] };
      this.slots.set(key, slot);
    }
    if (slot.waiting.length > 0 || slot.active + weight > this.limitOf(key)) {
      if (slot.waiting.length >= this.maxWaiting) throw new TenantBusyError();
      await this.wait(key, slot, weight, signal);
    } else {
      slot.active += weight;
      this.started(key);
    }
    try {
      return await task();
    } finally {
      slot.active -= weight;
      this.admit(key, slot);
    }
  }

  private wait(key: string, slot: Slot, weight: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = slot.waiting.indexOf(waiter);
        if (index === -1) return;
        slot.waiting.splice(index, 1);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
        // The head may have left: whoever is next may fit now.
        this.admit(key, slot);
      };
      const waiter: Waiter = {
        weight,
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      slot.waiting.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Starts waiters from the head while they fit; drops the key when nothing runs or waits. */
  private admit(key: string, slot: Slot): void {
    const limit = this.limitOf(key);
    for (let head = slot.waiting[0]; head && slot.active + head.weight <= limit; head = slot.waiting[0]) {
      slot.waiting.shift();
      slot.active += head.weight;
      this.started(key);
      head.start();
    }
    if (slot.active === 0 && slot.waiting.length === 0) this.slots.delete(key);
  }

  /** Counts the key as active now for sharedWindowMs, as if it had started a task (a call that takes no slot). */
  touch(key: string): void {
    this.started(key);
  }

  private started(key: string): void {
    if (this.sharedWindowMs !== undefined) this.lastStart.set(key, performance.now());
  }

  /** The key's capacity, or no bound while it is alone (sharedWindowMs). */
  private limitOf(key: string): number {
    if (this.sharedWindowMs === undefined) return this.capacity;
    const since = performance.now() - this.sharedWindowMs;
    let shared = false;
    for (const [other, at] of this.lastStart) {
      if (at < since && !this.slots.has(other)) this.lastStart.delete(other);
      else if (other !== key) shared = true;
    }
    return shared ? this.capacity : Number.POSITIVE_INFINITY;
  }
}
