import type { Logger } from 'pino';
import type { OutboxDoc, OutboxStore } from '../store/outbox-store';

/**
 * Published events' outbox copies are taken out together, once the oldest has waited this long (or REMOVAL_BATCH of
 * them wait): one delete per outbox slot (a second of appends), not one per batch. At a few records a second a batch
 * is one record, and its removal was a fifth of what the moderator sent the store per record.
 */
const REMOVAL_DELAY_MS = 1_000;
/** Copies waiting to be taken out that make a removal due at once. */
const REMOVAL_BATCH = 500;
/** Copies waiting to be taken out remembered at most; past it the oldest are left to a later sweep (published twice). */
const REMOVALS_HELD = 100_000;

type Entry = Pick<OutboxDoc, '_id' | 'slot'>;

/** The copies of published (or set-aside) events still to take out of the store's outbox, oldest first. */
export class RemovalQueue {
  private readonly entries = new Map<string, Entry>();
  /** When the oldest entry was queued (epoch ms). */
  private since = 0;

  constructor(
    private readonly outbox: Pick<OutboxStore, 'removeEntries'>,
    private readonly log: Logger,
  ) {}

  /** Whether the copy of this event waits to be taken out (it is published: a sweep leaves it alone). */
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
   * Takes the queued copies out of the store's outbox once due (or `all` now). A failed removal keeps them queued for
   * the next turn; a copy left behind by a crash is published again by a sweep, which consumers dedupe.
   */
  async remove({ all = false }: { all?: boolean } = {}): Promise<void> {
    if (this.entries.size === 0 || (!all && this.dueIn() > 0)) return;
    const entries = [...this.entries.values()];
    try {
      await this.outbox.removeEntries(entries);
      for (const { _id } of entries) this.entries.delete(_id);
      this.since = Date.now();
    } catch (err) {
      this.log.warn({ err, count: entries.length }, 'outbox copies not taken out; trying again');
    }
  }
}
