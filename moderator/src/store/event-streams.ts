import type { Gathering } from '@vigil/proto/platform';
import { COLLECTIONS, type DomainEvent } from '@vigil/proto';
import { recordStream, reportStream, userStream } from '../domain/stream-names';
import type { Collection, Db } from 'mongodb';
import { evolveRecord, type RecordState } from '../domain/record';
import { evolveReport, type ReportState } from '../domain/report';
import type { Loaded, StreamKind } from '../domain/stream';
import { evolveUser, type UserState } from '../domain/user';
import { EventAppends } from './event-appends';
import { eventOf, type EventDoc } from './event-doc';
import { guarded } from './mongo-errors';
import { migrateLegacyOutbox } from './outbox-migration';
import type { OutboxStore } from './outbox-store';

/** Commits whose events go to the store in one command at most (see WriteGroups). */
export const MAX_GROUP = 64;

/** Any stream the store loads and commits. */
export type AnyState = RecordState | UserState | ReportState;

/** Where a stream's load starts: its projection, which doubles as a snapshot. */
export interface Snapshots {
  snapshot(kind: StreamKind, id: string): Promise<AnyState | null>;
}

/**
 * Another writer appended to one of the streams first; re-read and decide again. `appended`: the events stored before
 * the conflicting one (an append is ordered, not atomic), already projected by `commit`.
 */
export class StreamConflict extends Error {
  constructor(readonly appended: DomainEvent[] = []) {
    super('stream version taken');
    this.name = 'StreamConflict';
  }
}

/**
 * Event streams in the `events` collection, with optimistic concurrency from the unique `{stream, version}` index. A
 * stream is loaded from its snapshot (the projection), and only after a conflict (or when asked to be fresh) also
 * from the events past it. A stale snapshot cannot go unnoticed by a writer: its next version already exists, so the
 * append conflicts.
 */
export class EventStreams {
  private readonly events: Collection<EventDoc>;
  /** Appends events, each in an outbox slot, together with concurrent commits'. */
  private readonly appends: EventAppends;

  constructor(
    db: Db,
    private readonly outbox: OutboxStore,
    private readonly snapshots: Snapshots,
    gathering?: Gathering,
  ) {
    // Optional fields stay absent: stored `null`s would not parse as the optional fields of the event schemas.
    this.events = db.collection<EventDoc>(COLLECTIONS.events, { ignoreUndefined: true });
    this.appends = new EventAppends(this.events, outbox, MAX_GROUP, gathering);
  }

  /** Idempotent: creating an index that exists is a no-op. */
  async ensureIndexes(): Promise<void> {
    await guarded(async () => {
      await this.events.createIndex({ stream: 1, version: 1 }, { unique: true, name: 'stream_version' });
      // Finds the events stored before the outbox collection existed (see outbox-migration.ts).
      await this.events.createIndex({ published: 1, _id: 1 }, { name: 'outbox' });
      // A sweep reads the events of an outbox slot by equality on `slot` (see OutboxStore.slotEvents).
      await this.events.createIndex({ slot: 1 }, { name: 'slot' });
    });
  }

  /** Gives the events of the previous release's outbox flag their outbox copies (see outbox-migration.ts). */
  migrateOutbox(): Promise<void> {
    return migrateLegacyOutbox(this.events, this.outbox);
  }

  /**
   * A record's stream as if it had no event yet, read from nowhere: the guess of a moderation that assumes its record
   * is new. A wrong guess costs no wrong write: the stream's first version exists, so the append conflicts, like that
   * of any stale snapshot, and the moderation loads and decides again.
   */
  assumedNewRecord(recordId: string): Loaded<RecordState> {
    return { kind: 'record', stream: recordStream(recordId), state: null, tail: [], events: [], created: true };
  }

  loadRecord(recordId: string, fresh: boolean): Promise<Loaded<RecordState>> {
    return this.load('record', recordStream(recordId), recordId, fresh) as Promise<Loaded<RecordState>>;
  }

  loadUser(userId: string, fresh: boolean): Promise<Loaded<UserState>> {
    return this.load('user', userStream(userId), userId, fresh) as Promise<Loaded<UserState>>;
  }

  /**
   * A report stream, always with the events past its projection: a report has a couple of events, and its decision
   * must see a decision another replica just made.
   */
  loadReport(reportId: string): Promise<Loaded<ReportState>> {
    return this.load('report', reportStream(reportId), reportId, true) as Promise<Loaded<ReportState>>;
  }

  private async load(kind: StreamKind, stream: string, id: string, fresh: boolean): Promise<Loaded<AnyState>> {
    return guarded(async () => {
      let state: AnyState | null = await this.snapshots.snapshot(kind, id);
      const tail: DomainEvent[] = [];
      if (fresh) {
        const cursor = this.events.find({ stream, version: { $gt: state?.version ?? 0 } }).sort({ version: 1 });
        for await (const doc of cursor) {
          const event = eventOf(doc);
          tail.push(event);
          state =
            kind === 'record'
              ? evolveRecord(state as RecordState | null, event)
              : kind === 'user'
                ? evolveUser(state as UserState | null, event)
                : evolveReport(state as ReportState | null, event);
        }
      }
      return { kind, stream, state, tail, events: [], created: state === null };
    });
  }

  /** Appends the events of several streams (see EventAppends); StreamConflict if any version was taken. */
  async append(events: DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    const stored = await this.appends.append(events.map((event) => ({ ...event, _id: event.id })));
    if (stored < events.length) throw new StreamConflict(events.slice(0, stored));
  }

  /**
   * Appends events of streams that have no projection (a rule's RuleDegraded); how many went in before a version
   * already taken.
   */
  appendUnprojected(events: DomainEvent[]): Promise<number> {
    return this.appends.append(events.map((event) => ({ ...event, _id: event.id })));
  }

  /** Whether the stream has an event past `version` (one index lookup on `{stream, version}`). */
  async hasEventAfter(stream: string, version: number): Promise<boolean> {
    return guarded(
      async () => (await this.events.findOne({ stream, version: version + 1 }, { projection: { _id: 1 } })) !== null,
    );
  }

  /** Every event of one stream, oldest first. */
  async readStream(stream: string, tenantId: string): Promise<DomainEvent[]> {
    return guarded(async () => {
      const docs = await this.events.find({ stream, tenantId }).sort({ version: 1 }).toArray();
      return docs.map(eventOf);
    });
  }

  /** Every stored event, stream by stream, each stream oldest first (a full read, for a rebuild). */
  async *allEventsByStream(): AsyncGenerator<DomainEvent> {
    const cursor = this.events.find({}, { projection: { published: 0 } }).sort({ stream: 1, version: 1 });
    for await (const doc of cursor) yield eventOf(doc);
  }
}
