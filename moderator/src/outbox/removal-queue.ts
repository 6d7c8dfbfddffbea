import type { Logger } from 'pino';
import type { OutboxDoc, OutboxStore } from '../store/outbox-store';

/**
 * Markers of published slots (and published copies) are taken out together, once the oldest has waited this long (or
 * REMOVAL_BATCH of them wait): one delete for the markers of a second or two of appends.
 */
const REMOVAL_DELAY_MS = 1_000;
/** Markers and copies waiting to be taken out that make a removal due at once. */
const REMOVAL_BATCH = 500;
/** Markers and copies waiting to be taken out, remembered at most; past it the oldest are left to a later sweep. */
const REMOVALS_HELD = 100_000;

type Entry = Pick<OutboxDoc, '_id' | 'slot'>;

/** The markers of published slots and the copies of published (or set-aside) events still to take out, oldest first. */
export class RemovalQueue {
  private readonly entries = new Map<string, Entry>();
  /** When the oldest entry was queued (epoch ms). */
  private since = 0;

  constructor(
    private readonly outbox: Pick<OutboxStore, 'removeEntries'>,
    private readonly log: Logger,
  ) {}

  /** Whether this marker or copy waits to be taken out (it is published: a sweep leaves it alone). */
  has(id: string): boolean {
    return this.entries.has(id);
  }

  add(docs: readonly Entry[]): void {
    if (this.entries.size === 0) this.since = Date.now();
    for (const { _id, slot } of docs) this.entries.set(_id, slot === undefined ? { _id } : { _id, slot });
    for (const id of this.entries.keys()) {
      if (this.entries.size <= REMOVALS_HELD) break;
      this.entries.delete(id);
    }
  }

  /** Milliseconds until the queued removals are due; Infinity when none wait. */
  dueIn(): number {
    if (this.entries.size === 0) return Number.POSITIVE_INFINITY;
    if (this.entries.size >= REMOVAL_BATCH) return 0;
    return Math.max(0, this.since + REMOVAL_DELAY_MS - Date.now());
  }

  /**
   * Takes the queued markers and copies out of the store's outbox once due (or `all` now). A failed removal keeps them
   * queued for the next turn; one left behind by a crash has its events published again by a sweep, which consumers
   * dedupe.
   */
  async remove({ all = false }: { all?: boolean } = {}): Promise<void> {
    if (this.entries.size === 0 || (!all && this.dueIn() > 0)) return;
    const entries = [...this.entries.values()];
    try {
      await this.outbox.removeEntries(entries);
      this.log.debug({ count: entries.length }, 'outbox markers taken out');
      for (const { _id } of entries) this.entries.delete(_id);
      this.since = Date.now();
    } catch (err) {
      this.log.warn({ err, count: entries.length }, 'outbox markers not taken out; trying again');
    }
  }
}
