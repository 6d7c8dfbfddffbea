import type { Logger } from 'pino';
import { decodeTime } from 'ulid';
import { isMarker, type OutboxDoc, type OutboxStore } from '../store/outbox-store';
import { SLOT_MS, slotEnd } from '../store/outbox-slots';
import type { HandOver } from './hand-over';
import type { RemovalQueue } from './removal-queue';

/**
 * An append lands in the store within this long after its slot began (a command in flight longer is taken as lost).
 * A sweep takes out a slot it cannot know closed (another process's, or one of this process's appends failed without
 * proof) only once it is this old, reading the slot again until then; an outbox copy without its event is dropped
 * once this old (the previous release's copies went in before their events).
 */
export const APPEND_BOUND_MS = 5 * 60 * 1000;
/**
 * This process's own slots are published from memory or from its overflow slots; a routine sweep reads one only once
 * its second is this long over (an append whose hand-over never came: a writer that stopped between the two).
 */
const OWN_GRACE_MS = 60_000;
/** Slots a sweep published events of and keeps reading until APPEND_BOUND_MS, remembered at most. */
const SWEPT_SLOTS = 10_000;

/** A slot a sweep read: its events it publishes, and whether any was left to this process's memory (`local`). */
interface SweptSlot {
  slot: string;
  end: number;
  tracked: boolean;
  local: boolean;
  ids: string[];
}

/** What one sweep gathered: the events to publish (marked replayed), which of them came from outbox copies, the slots read. */
export interface SweepBatch {
  docs: OutboxDoc[];
  copies: ReadonlySet<string>;
  read: SweptSlot[];
}

export interface OutboxSweepOptions {
  outbox: OutboxStore;
  /** The relay's events in memory: a sweep leaves them to it. */
  handOver: HandOver;
  /** The relay's removals in waiting: a sweep skips what is already on its way out, and queues the slots it ends. */
  removals: RemovalQueue;
  batchSize: number;
  /** See APPEND_BOUND_MS. */
  appendBoundMs: number;
  log: Logger;
  /** Milliseconds that never go back (default: the process's monotonic clock), for how long a marker has been seen. */
  clock?: () => number;
}

/**
 * What a sweep of the store's outbox reads, for the relay to publish: the events of the slots its markers name (by
 * equality on the slot), leaving alone what this process still has in flight or in memory, and the copies an earlier
 * release left. It remembers what it published of slots it cannot know closed, so that the next sweep reads only what
 * came since, and queues their markers' removal once no append of them can land any more.
 */
export class OutboxSweep {
  /**
   * Events a sweep here published, by the slot it read them from, while the slot's marker stays (see APPEND_BOUND_MS):
   * the next sweep publishes only what came since. Insertion order, the oldest forgotten past SWEPT_SLOTS.
   */
  private readonly swept = new Map<string, Set<string>>();
  /**
   * When a sweep here first read each slot it cannot know closed, on this process's monotonic clock. A slot's age is
   * judged from this, never from its name: the name holds the writer's clock, which may run behind this one (another
   * host, a clock stepped since the writer started). Every append of a slot began within a second of its marker's
   * insert, and the first read came after that insert (or, for a slot of this process's read without its marker,
   * after the append failed), so once APPEND_BOUND_MS and a slot have passed since it, none can land. Insertion
   * order, the oldest forgotten past SWEPT_SLOTS (read again, it waits again).
   */
  private readonly firstFound = new Map<string, number>();
  private readonly clock: () => number;

  constructor(private readonly options: OutboxSweepOptions) {
    this.clock = options.clock ?? (() => performance.timeOrigin + performance.now());
  }

  /**
   * The events of one sweep, at most about `batchSize`, oldest slots first. With `minAgeMs`, slots whose second ended
   * less than that ago and copies younger than that are left for now (most likely in flight where they were
   * appended); this process's own slots wait OWN_GRACE_MS.
   */
  async gather(minAgeMs: number, now: number): Promise<SweepBatch> {
    const { outbox, batchSize } = this.options;
    const found = await outbox.unpublished(batchSize + this.options.handOver.localCount);
    const copies = found
      .filter((doc): doc is OutboxDoc => !isMarker(doc))
      .filter(
        (doc) =>
          !this.options.handOver.has(doc._id) &&
          !this.options.removals.has(doc._id) &&
          (minAgeMs === 0 || decodeTime(doc._id) <= now - minAgeMs),
      )
      .slice(0, batchSize);
    const docs = [...(await this.stored(copies))];
    // Oldest slots first, each read whole, until a batch is gathered.
    const slots = new Set(found.filter((doc) => isMarker(doc)).map((doc) => doc._id));
    // This process's slots with an append of unknown outcome are read too, their marker found or not: another process
    // may have taken it out before a late append landed, and only this one knows of the slot then.
    for (const slot of outbox.slots.uncertainSlots()) slots.add(slot);
    const markers = [...slots]
      .filter((slot) => !this.options.removals.has(slot))
      .map((slot) => ({ slot, end: slotEnd(slot) }))
      .sort((a, b) => a.end - b.end || (a.slot < b.slot ? -1 : 1));
    const read: SweptSlot[] = [];
    for (const { slot, end } of markers) {
      if (docs.length >= batchSize) break;
      const own = outbox.slots.has(slot);
      if (own && (outbox.slots.inFlight(slot) || (minAgeMs > 0 && end > now - OWN_GRACE_MS))) continue;
      if (!own && end > now - minAgeMs) continue;
      // A slot tracked here with every append proven: only its events not published yet. Otherwise, all but those
      // published from here already.
      const tracked = own && !outbox.slots.uncertain(slot);
      if (!tracked && !this.firstFound.has(slot)) this.firstFound.set(slot, this.clock());
      const seen = this.swept.get(slot);
      let local = false;
      const events = (await outbox.slotEvents(slot)).filter((doc) => {
        if (doc.deadLetteredAt) return false;
        if (this.options.handOver.has(doc._id)) return !(local = true);
        return tracked ? outbox.slots.isPending(doc._id) : !seen?.has(doc._id);
      });
      docs.push(...events);
      read.push({ slot, end, tracked, local, ids: events.map((doc) => doc._id) });
    }
    docs.sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
    return { docs, copies: new Set(copies.map((doc) => doc._id)), read };
  }

  /** After the gathered events were published: what each slot read means for its marker (see `sweptSlot`). */
  settle(read: readonly SweptSlot[]): void {
    for (const slot of read) this.sweptSlot(slot);
  }

  /**
   * After a sweep published a slot's events: a slot this process tracks goes with its others; one it cannot know
   * closed is taken out once no append of it can land any more (see `firstFound`) and nothing of it was in flight
   * here, and is read again by later sweeps until then.
   */
  private sweptSlot({ slot, tracked, local, ids }: SweptSlot): void {
    if (tracked) return;
    const found = this.firstFound.get(slot);
    if (!local && found !== undefined && this.clock() - found >= this.options.appendBoundMs + SLOT_MS) {
      this.firstFound.delete(slot);
      this.swept.delete(slot);
      this.options.outbox.slots.forget(slot);
      this.options.removals.add([{ _id: slot }]);
      return;
    }
    const seen = this.swept.get(slot) ?? new Set<string>();
    for (const id of ids) seen.add(id);
    this.swept.delete(slot);
    this.swept.set(slot, seen);
    for (const old of this.swept.keys()) {
      if (this.swept.size <= SWEPT_SLOTS) break;
      this.swept.delete(old);
    }
    for (const old of this.firstFound.keys()) {
      if (this.firstFound.size <= SWEPT_SLOTS) break;
      this.firstFound.delete(old);
    }
  }

  /**
   * The outbox copies whose events are stored (each looked up). A copy without its event is dropped once
   * APPEND_BOUND_MS old, left for later before that. Leaving one out cannot reorder its stream: the stream's next
   * version is only appended after it is stored.
   */
  private async stored(docs: OutboxDoc[]): Promise<OutboxDoc[]> {
    if (docs.length === 0) return docs;
    const stored = await this.options.outbox.storedIds(docs.map((doc) => doc._id));
    const missing = docs.filter((doc) => !stored.has(doc._id));
    const bound = this.options.appendBoundMs;
    const orphans = missing.filter((doc) => decodeTime(doc._id) <= Date.now() - bound);
    if (orphans.length > 0) {
      await this.options.outbox.removeEntries(orphans);
      this.options.log.warn(
        { count: orphans.length, first: orphans[0]?._id },
        'outbox copies without an event dropped',
      );
    }
    return docs.filter((doc) => stored.has(doc._id));
  }
}
