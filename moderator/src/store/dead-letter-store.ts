import { COLLECTIONS } from '@vigil/proto';
import { upsertRetried } from '@vigil/proto/platform';
import type { Collection, Db } from 'mongodb';
import type { EventDoc } from './event-doc';
import { guarded } from './mongo-errors';
import { OutboxStore } from './outbox-store';

/**
 * A stored event the outbox relay set aside because the broker refused it. The event itself stays in `events` (the
 * source of truth, content included); this document carries only what an operator needs to decide, so it holds no
 * content and can always be written, however large the event.
 */
export interface OutboxDeadLetterDoc {
  /** The event id. */
  _id: string;
  tenantId: string;
  stream: string;
  version: number;
  eventType: string;
  /** Bounded reason, e.g. `message_too_large` (the metric label too). */
  reason: string;
  /** The broker's error name, e.g. `MESSAGE_TOO_LARGE`. */
  error: string;
  /** Size of the serialized event, bytes. */
  bytes: number;
  /** `open` until an operator replays it; a replay that fails again opens it again. */
  state: 'open' | 'replayed';
  /** Times it was set aside (a replay that fails again counts one more). */
  count: number;
  firstAt: Date;
  lastAt: Date;
  replayedAt?: Date;
}

export interface SetAside {
  event: EventDoc;
  reason: string;
  error: string;
  bytes: number;
}

/**
 * The moderator's dead letters: `outbox_dead_letters`, and taking an event out of (or back into) the outbox. Why a
 * MongoDB collection rather than a dead-letter topic: the commonest refusal is a message too large for the broker, and
 * the broker refuses it on any topic, so a topic could not keep it; the store that already holds the event can.
 */
export class DeadLetterStore {
  readonly deadLetters: Collection<OutboxDeadLetterDoc>;
  private readonly events: Collection<EventDoc>;
  private readonly outbox: OutboxStore;

  constructor(readonly db: Db) {
    this.deadLetters = db.collection<OutboxDeadLetterDoc>(COLLECTIONS.outboxDeadLetters, { ignoreUndefined: true });
    this.events = db.collection<EventDoc>(COLLECTIONS.events);
    this.outbox = new OutboxStore(db);
  }

  async ensureIndexes(): Promise<void> {
    await guarded(() => this.deadLetters.createIndex({ state: 1, _id: 1 }, { name: 'state' }));
  }

  /**
   * Records the dead letter, then takes the event out of the outbox. In that order: a crash in between leaves the event
   * unpublished, so the relay meets it again and records it again (an upsert by event id, counted once more).
   */
  async setAside({ event, reason, error, bytes }: SetAside, now = new Date()): Promise<void> {
    await guarded(() =>
      upsertRetried(() =>
        this.deadLetters.updateOne(
          { _id: event._id },
          {
            $set: {
              tenantId: event.tenantId,
              stream: event.stream,
              version: event.version,
              eventType: event.type,
              reason,
              error,
              bytes,
              state: 'open',
              lastAt: now,
            },
            $setOnInsert: { firstAt: now },
            $inc: { count: 1 },
            $unset: { replayedAt: '' },
          },
          { upsert: true },
        ),
      ),
    );
    // `deadLetteredAt` tells it apart from an event that was published; then it leaves the outbox.
    await guarded(() => this.events.updateOne({ _id: event._id }, { $set: { deadLetteredAt: now } }));
    await this.outbox.removeEntries([{ _id: event._id }]);
  }

  /** Dead letters, oldest event first; only the open ones unless `all`. */
  list({ all = false, limit = 100 }: { all?: boolean; limit?: number } = {}): Promise<OutboxDeadLetterDoc[]> {
    return guarded(() =>
      this.deadLetters
        .find(all ? {} : { state: 'open' })
        .sort({ _id: 1 })
        .limit(limit)
        .toArray(),
    );
  }

  /**
   * Puts the event back into the outbox: the relay publishes it with its next batch (ahead of newer events, since
   * outbox order is event id order, but after the newer events of its own stream that went out meanwhile). If the
   * broker refuses it again, it is set aside again. False when there is no open dead letter with this id.
   */
  async replay(eventId: string, now = new Date()): Promise<boolean> {
    const doc = await guarded(() => this.deadLetters.findOne({ _id: eventId, state: 'open' }));
    if (!doc) return false;
    const event = await guarded(() => this.events.findOne({ _id: eventId }));
    if (event) {
      await this.outbox.restore([event]);
      await guarded(() => this.events.updateOne({ _id: eventId }, { $unset: { deadLetteredAt: '' } }));
    }
    // Unless the relay set it aside again meanwhile (then it stays open, with its new `lastAt`).
    await guarded(() =>
      this.deadLetters.updateOne(
        { _id: eventId, lastAt: doc.lastAt },
        { $set: { state: 'replayed', replayedAt: now } },
      ),
    );
    return true;
  }
}
