import { COLLECTIONS, ulid } from '@vigil/proto';
import { insertEach, insertUnlessExists } from '@vigil/proto/platform';
import type { Collection, Db } from 'mongodb';
import type { EventDoc } from './event-doc';
import { guarded } from './mongo-errors';
import { SlotBook } from './outbox-slots';

/** Outbox documents removed per command in `removeEntries`. */
const REMOVE_CHUNK = 100;
/** Event lookups in flight at once in `storedIds`. */
const STORED_AT_ONCE = 16;

/**
 * A document of the `outbox` collection: a slot marker, or a copy of one event still to publish.
 *
 * - A marker (`_id`: the slot, see SlotBook) says that events carrying that slot may be stored and not published. It is
 *   inserted before the first append of its slot and removed once every event of the slot is published.
 * - A copy (`_id`: the event id, the whole event) comes from a replay of a dead letter, from events of the release
 *   before the outbox collection, or from the previous release, which copied every event (`slot` then names that
 *   release's slot of the copy, the equality it removed copies by).
 */
export type OutboxDoc = EventDoc & { slot?: string };
export type MarkerDoc = { _id: string };

/** Whether an outbox document is a slot marker (its `_id` names a slot; an event id has no `:`). */
export function isMarker(doc: { _id: string }): boolean {
  return doc._id.includes(':');
}

/**
 * The `outbox` collection, and the slot field of stored events. EventAppends opens a slot (its marker durable) before
 * it appends events carrying it; the relay publishes them from memory, or a sweep reads a slot's events by equality
 * on `slot` (indexed in `events`), and the marker goes once all are published. So a record costs no outbox write of
 * its own: one marker insert and one removal per process and second. The collection holds only markers of slots
 * still to publish and a few copies, so reading it whole costs little.
 */
export class OutboxStore {
  private readonly outbox: Collection<OutboxDoc | MarkerDoc>;
  private readonly events: Collection<EventDoc>;
  /** Names this store's outbox slots; unique per process. */
  readonly instanceId: string;
  /** This process's open slots: markers, appends in flight, events not published yet. */
  readonly slots: SlotBook;

  constructor(db: Db, { instanceId = ulid(), now }: { instanceId?: string; now?: () => number } = {}) {
    this.instanceId = instanceId;
    this.slots = new SlotBook(instanceId, now);
    this.outbox = db.collection<OutboxDoc | MarkerDoc>(COLLECTIONS.outbox, { ignoreUndefined: true });
    this.events = db.collection<EventDoc>(COLLECTIONS.events);
  }

  async ensureIndexes(): Promise<void> {
    // The previous release's copies are taken out by their slot.
    await guarded(() => this.outbox.createIndex({ slot: 1 }, { name: 'slot' }));
  }

  /**
   * Opens an append: the slot its events carry, once the slot's marker is durable (inserted once per slot; one already
   * there, from an insert whose reply was lost, is as good). Close it with `closeAppend`.
   */
  openAppend(): Promise<string> {
    return this.slots.begin((slot) =>
      guarded(async () => {
        await insertUnlessExists(this.outbox, { _id: slot });
      }),
    );
  }

  /** Closes an append of `slot`: the ids it stored, and whether the store proved that (see SlotBook.end). */
  closeAppend(slot: string, stored: readonly string[], certain: boolean): void {
    this.slots.end(slot, stored, certain);
  }

  /** The events a slot holds, in `_id` order (an equality on the indexed `slot` field: a second's appends). */
  async slotEvents(slot: string): Promise<EventDoc[]> {
    const docs = await guarded(() => this.events.find({ slot }).toArray());
    return docs.sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
  }

  /** Copies without a slot (a replay, events of the previous release); one already there is left as it is. */
  async restore(docs: EventDoc[]): Promise<void> {
    const copies = docs.map((doc) => {
      const copy: OutboxDoc = { ...doc };
      delete copy.published;
      delete copy.deadLetteredAt;
      delete copy.slot;
      return copy;
    });
    await guarded(() => insertEach(this.outbox, copies));
  }

  /**
   * The first markers and copies, in `_id` order. The collection holds only what is still to publish, so this reads
   * little however many events are stored.
   */
  unpublished(limit: number): Promise<Array<OutboxDoc | MarkerDoc>> {
    return guarded(() => this.outbox.find({}).sort({ _id: 1 }).limit(limit).batchSize(limit).toArray());
  }

  /**
   * Takes markers and published (or set aside) copies out: copies of the previous release by their slot (an equality,
   * so it reads only that slot's copies), markers and other copies by `_id` together. A list of ids is matched in Go
   * against the whole collection, which holds a few markers and copies.
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
    for (let start = 0; start < loose.length; start += REMOVE_CHUNK) {
      const chunk = loose.slice(start, start + REMOVE_CHUNK);
      await guarded(() =>
        chunk.length === 1
          ? this.outbox.deleteOne({ _id: chunk[0]! })
          : this.outbox.deleteMany({ _id: { $in: chunk } }),
      );
    }
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
