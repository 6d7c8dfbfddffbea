import { COLLECTIONS, ulid } from '@vigil/proto';
import { insertEach } from '@vigil/proto/platform';
import type { Collection, Db } from 'mongodb';
import { decodeTime } from 'ulid';
import type { EventDoc } from './event-doc';
import { guarded } from './mongo-errors';

/** Outbox entries removed per command in `removeEntries`. */
const REMOVE_CHUNK = 100;
/** Event lookups in flight at once in `storedIds`. */
const STORED_AT_ONCE = 16;
/** Width of an outbox slot, milliseconds of event-id time (see OutboxDoc). */
const SLOT_MS = 1_000;

/**
 * An outbox entry: a copy of an event still to publish. `slot` (the appending store's instance and a second of
 * event-id time) is the equality key the entry is read and removed by, a second's appends per slot, so that neither
 * costs more with a longer outbox: FerretDB v1 runs any other filter over the whole collection. Entries copied back by
 * a replay or from the previous release have none.
 */
export type OutboxDoc = EventDoc & { slot?: string };

/**
 * The `outbox` collection: a copy of each stored event until the relay has published it. EventStore writes the copies
 * of its appends; the relay reads and removes them; DeadLetterStore takes a refused event out and puts a replayed one
 * back. It holds only what is still to publish, so reading and emptying it costs little.
 */
export class OutboxStore {
  private readonly outbox: Collection<OutboxDoc>;
  private readonly events: Collection<EventDoc>;
  /** Names this store's outbox slots; unique per process. */
  readonly instanceId: string;

  constructor(db: Db, { instanceId = ulid() }: { instanceId?: string } = {}) {
    this.instanceId = instanceId;
    this.outbox = db.collection<OutboxDoc>(COLLECTIONS.outbox, { ignoreUndefined: true });
    this.events = db.collection<EventDoc>(COLLECTIONS.events);
  }

  async ensureIndexes(): Promise<void> {
    await guarded(() => this.outbox.createIndex({ slot: 1 }, { name: 'slot' }));
  }

  /** The outbox slot of an event this store appends. */
  slotOf(eventId: string): string {
    return `${this.instanceId}:${Math.floor(decodeTime(eventId) / SLOT_MS)}`;
  }

  /** Copies of events about to be appended here, each in its slot. */
  async insertCopies(docs: EventDoc[]): Promise<void> {
    await guarded(() =>
      this.outbox.insertMany(
        docs.map((doc) => ({ ...doc, slot: this.slotOf(doc._id) })),
        { ordered: false },
      ),
    );
  }

  /** Copies without a slot (a replay, events of the previous release); one already there is left as it is. */
  async restore(docs: EventDoc[]): Promise<void> {
    const copies = docs.map((doc) => {
      const copy: OutboxDoc = { ...doc };
      delete copy.published;
      delete copy.deadLetteredAt;
      return copy;
    });
    await guarded(() => insertEach(this.outbox, copies));
  }

  /**
   * The oldest entries, in `_id` order. The collection holds only what is still to publish, so this reads little
   * however many events are stored.
   */
  unpublished(limit: number): Promise<OutboxDoc[]> {
    return guarded(() => this.outbox.find({}).sort({ _id: 1 }).limit(limit).batchSize(limit).toArray());
  }

  /** The entries of one slot, in `_id` order (an equality read: a few dozen entries). */
  async slot(slot: string): Promise<OutboxDoc[]> {
    const docs = await guarded(() => this.outbox.find({ slot }).toArray());
    return docs.sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
  }

  /**
   * Takes published (or set aside) events out: one delete per slot (by slot equality, so it reads only that slot's
   * entries), one per entry without a slot.
   */
  async removeEntries(entries: Array<Pick<OutboxDoc, '_id' | 'slot'>>): Promise<void> {
    const bySlot = new Map<string, string[]>();
    const loose: string[] = [];
    for (const { _id, slot } of entries) {
      const ids = slot ? bySlot.get(slot) : undefined;
      if (!slot) loose.push(_id);
      else if (ids) ids.push(_id);
      else bySlot.set(slot, [_id]);
    }
    for (const [slot, ids] of bySlot) {
      for (let start = 0; start < ids.length; start += REMOVE_CHUNK) {
        const chunk = ids.slice(start, start + REMOVE_CHUNK);
        await guarded(() => this.outbox.deleteMany({ slot, _id: { $in: chunk } }));
      }
    }
    for (const _id of loose) await guarded(() => this.outbox.deleteOne({ _id }));
  }

  /** Which of these event ids are stored events (one `_id` lookup each, a few at once). */
  async storedIds(ids: string[]): Promise<Set<string>> {
    const stored = new Set<string>();
    for (let start = 0; start < ids.length; start += STORED_AT_ONCE) {
      const found = await Promise.all(
        ids
          .slice(start, start + STORED_AT_ONCE)
          .map((_id) => guarded(() => this.events.findOne({ _id }, { projection: { _id: 1 } }))),
      );
      for (const doc of found) if (doc) stored.add(doc._id);
    }
    return stored;
  }
}
