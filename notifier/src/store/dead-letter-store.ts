import { COLLECTIONS } from '@vigil/proto';
import { upsertRetried } from '@vigil/proto/platform';
import type { Collection, Db } from 'mongodb';

/**
 * An event or webhook command the notifier could not process after its retries. It keeps where the message is and
 * why, never the message itself (events carry content): the event stays in the moderator's `events` collection, and
 * replaying it there (`dead-letters replay`) publishes it again.
 */
export interface EventDeadLetterDoc {
  /** The event id, or `topic/partition/offset` when the message has none. */
  _id: string;
  eventId?: string;
  tenantId?: string;
  eventType?: string;
  topic: string;
  partition: number;
  offset: string;
  /** Bounded reason: `invalid_event`, `invalid_command`, `processing_failed` (the metric label too). */
  reason: string;
  /** The error's class name (`TypeError`, `MongoServerError`), never its message. */
  error?: string;
  /** Times it was set aside (a replay that fails again counts one more). */
  count: number;
  firstAt: Date;
  lastAt: Date;
}

export type EventDeadLetter = Omit<EventDeadLetterDoc, 'count' | 'firstAt' | 'lastAt'>;

/** The notifier's `event_dead_letters` collection. */
export class DeadLetterStore {
  readonly deadLetters: Collection<EventDeadLetterDoc>;

  constructor(db: Db) {
    this.deadLetters = db.collection<EventDeadLetterDoc>(COLLECTIONS.eventDeadLetters, { ignoreUndefined: true });
  }

  /** An upsert by `_id`, so a re-delivered message is recorded once (and counted again). */
  async setAside(letter: EventDeadLetter, now = new Date()): Promise<void> {
    const { _id, ...fields } = letter;
    await upsertRetried(() =>
      this.deadLetters.updateOne(
        { _id },
        { $set: { ...fields, lastAt: now }, $setOnInsert: { firstAt: now }, $inc: { count: 1 } },
        { upsert: true },
      ),
    );
  }

  list(limit = 100): Promise<EventDeadLetterDoc[]> {
    return this.deadLetters.find({}).sort({ lastAt: -1 }).limit(limit).toArray();
  }
}
