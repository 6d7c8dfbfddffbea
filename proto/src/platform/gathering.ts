import { AsyncLocalStorage } from 'node:async_hooks';

/** One piece of work that runs now and will most likely write: expected at a group commit until it wrote there. */
interface Writer {
  startedAt: number;
  arrived: boolean;
}

/**
 * Writers known to be on their way to a group commit (WriteGroups): the commands of one fetch, moderated side by
 * side. A group waits for them before it goes, so that the commands a fetch brought share one write instead of going
 * in two or three groups as each finishes its judging. The wait counts only what this process is working on now,
 * never a time window: a writer alone does not wait at all, whatever the rate or the replicas.
 *
 * The wait is bounded twice by `maxWaitMs`: from when the group opened, and from when each writer it waits for
 * started. A writer that has not written by then is on slow work (an image, a provider), and is not waited for.
 * A group with a write of another caller in it (not run by `run`, such as a synchronous API call) does not wait.
 */
export class Gathering {
  private readonly storage = new AsyncLocalStorage<Writer>();
  private readonly writers = new Set<Writer>();
  private readonly listeners = new Set<() => void>();

  /** @param maxWaitMs How long a group waits for expected writers at most (see the class). */
  constructor(readonly maxWaitMs: number) {}

  /** Runs `work` as a writer expected at the group commit until it writes there or ends. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const writer: Writer = { startedAt: Date.now(), arrived: false };
    this.writers.add(writer);
    try {
      return await this.storage.run(writer, work);
    } finally {
      this.writers.delete(writer);
      this.changed();
    }
  }

  /** Notes that the caller writes now; false when it is not a writer `run` started (it must not be kept waiting). */
  arrive(): boolean {
    const writer = this.storage.getStore();
    if (!writer) return false;
    if (!writer.arrived) {
      writer.arrived = true;
      this.changed();
    }
    return true;
  }

  /** When the last writer still expected stops being expected (ms since the epoch); undefined when none is. */
  private expectedUntil(now: number): number | undefined {
    let until: number | undefined;
    for (const writer of this.writers) {
      const end = writer.startedAt + this.maxWaitMs;
      if (!writer.arrived && end > now) until = Math.max(until ?? 0, end);
    }
    return until;
  }

  /** Resolves once no writer is expected, or `maxWaitMs` after `openedAt`. */
  settled(openedAt: number): Promise<void> {
    const deadline = openedAt + this.maxWaitMs;
    // When to look again (the last expected writer's bound, or the group's); undefined: the wait is over.
    const next = () => {
      const now = Date.now();
      const until = this.expectedUntil(now);
      return until === undefined || now >= deadline ? undefined : Math.min(until, deadline);
    };
    const first = next();
    if (first === undefined) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(arrived);
        resolve();
      };
      // A writer arrived or ended: the wait is over once none is expected. Bounds run out only with time (the timer).
      const arrived = () => {
        if (this.expectedUntil(Date.now()) === undefined) done();
      };
      const look = () => {
        const at = next();
        if (at === undefined) done();
        else timer = setTimeout(look, at - Date.now());
      };
      let timer = setTimeout(look, first - Date.now());
      this.listeners.add(arrived);
    });
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
