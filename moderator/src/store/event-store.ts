import {
  COLLECTIONS,
  isDuplicateKeyError,
  recordStream,
  reportStream,
  userStream,
  WriteGroups,
  type DomainEvent,
} from '@vigil/proto';
import { MongoBulkWriteError, type Collection, type Db, type Document, type WriteError } from 'mongodb';
import { evolveRecord, type RecordState } from '../domain/record';
import { evolveReport, type ReportState } from '../domain/report';
import type { Loaded, StreamKind } from '../domain/stream';
import { evolveUser, type UserState } from '../domain/user';
import { guarded, toAppError } from './mongo-errors';
import { EventAppends } from './event-appends';
import { OutboxStore } from './outbox-store';

/** Events moved per round from the previous release's outbox flag (see migrateOutbox). */
const MIGRATE_CHUNK = 100;
/** Bound on re-projecting a stream that other writers keep extending (each round is one more write). */
const CATCH_UP_ROUNDS = 8;
/** Commits whose events, or new records, go to the store in one command at most (see WriteGroups). */
const MAX_GROUP = 64;

/**
 * An event document: the envelope, `_id` equal to the event id (time-ordered ULID). `deadLetteredAt`: the broker
 * refused it and it was set aside instead (see DeadLetterStore). `published` is only on events stored before the
 * outbox collection existed (false until published); see `migrateOutbox`.
 */
export type EventDoc = DomainEvent & { _id: string; published?: boolean; deadLetteredAt?: Date };

/** A user's flagged, not deleted records (see COLLECTIONS.userFlaggedCounts). */
export interface FlaggedCountDoc {
  _id: string;
  count: number;
}

export interface AppealDoc {
  _id: string;
  tenantId: string;
  userId: string;
  status: 'Open' | 'Approved' | 'Rejected';
  text: string;
  decisionReason?: string;
  /** Version of the user stream this document reflects. */
  version: number;
  sort: string;
  createdAt: Date;
  updatedAt: Date;
}

/** See COLLECTIONS.reportClaims: a reporter's open report on a target. */
export interface ReportClaimDoc {
  _id: string;
  tenantId: string;
  reportId: string;
  createdAt: Date;
}

/** See COLLECTIONS.reportContacts: the email an end user gave with a report. */
export interface ReportContactDoc {
  _id: string;
  tenantId: string;
  email: string;
  createdAt: Date;
}

/** Any stream the store loads and commits. */
type AnyState = RecordState | UserState | ReportState;

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

/** The envelope of a stored event: the document less its storage-only fields. */
export function eventOf(doc: Document): DomainEvent {
  const event: Document = { ...doc };
  delete event._id;
  delete event.published;
  delete event.deadLetteredAt;
  delete event.slot;
  return event as DomainEvent;
}

/**
 * Event streams in the `events` collection, with optimistic concurrency from the unique `{stream, version}` index,
 * and the `records` / `users` / `appeals` projections. The projection documents double as snapshots: a stream is
 * loaded from its projection, and only after a conflict (or when asked to be fresh) also from the events past it.
 * A stale snapshot cannot go unnoticed by a writer: its next version already exists, so the append conflicts.
 *
 * The use cases load streams, decide and stage in the domain, then `commit`: one append of every stream's events,
 * then their projections.
 */
export class EventStore {
  private readonly events: Collection<EventDoc>;
  /** The copies of appended events still to publish (the outbox relay's side of the store). */
  readonly outbox: OutboxStore;
  private readonly records: Collection<RecordState>;
  private readonly users: Collection<UserState>;
  private readonly flaggedCounts: Collection<FlaggedCountDoc>;
  private readonly appeals: Collection<AppealDoc>;
  private readonly reports: Collection<ReportState>;
  private readonly reportClaims: Collection<ReportClaimDoc>;
  private readonly reportContacts: Collection<ReportContactDoc>;
  /** Appends events, with their outbox copies, together with concurrent commits'. */
  private readonly appends: EventAppends;
  /** Concurrent commits' new record projections inserted together: true inserted, false already there. */
  private readonly recordInserts: WriteGroups<RecordState, boolean>;

  constructor(
    private readonly db: Db,
    { instanceId }: { instanceId?: string } = {},
  ) {
    this.outbox = new OutboxStore(db, { instanceId });
    // Optional fields stay absent: stored `null`s would not parse as the optional fields of the event schemas.
    const options = { ignoreUndefined: true };
    this.events = db.collection<EventDoc>(COLLECTIONS.events, options);
    this.records = db.collection<RecordState>(COLLECTIONS.records, options);
    this.users = db.collection<UserState>(COLLECTIONS.users, options);
    this.flaggedCounts = db.collection<FlaggedCountDoc>(COLLECTIONS.userFlaggedCounts, options);
    this.appeals = db.collection<AppealDoc>(COLLECTIONS.appeals, options);
    this.reports = db.collection<ReportState>(COLLECTIONS.reports, options);
    this.reportClaims = db.collection<ReportClaimDoc>(COLLECTIONS.reportClaims, options);
    this.reportContacts = db.collection<ReportContactDoc>(COLLECTIONS.reportContacts, options);
    this.appends = new EventAppends(this.events, this.outbox, MAX_GROUP);
    this.recordInserts = new WriteGroups((docs) => this.insertRecords(docs), MAX_GROUP);
  }

  /** Idempotent: creating an index that exists is a no-op. */
  async ensureIndexes(): Promise<void> {
    await guarded(async () => {
      await this.events.createIndex({ stream: 1, version: 1 }, { unique: true, name: 'stream_version' });
      // Finds the events stored before the outbox collection existed (see migrateOutbox).
      await this.events.createIndex({ published: 1, _id: 1 }, { name: 'outbox' });
      await this.records.createIndex({ tenantId: 1, sort: 1 }, { name: 'tenant_sort' });
      // Leading field userId: a user's records (countFlagged), whatever the size of the tenant.
      await this.records.createIndex({ userId: 1, status: 1 }, { name: 'user_status' });
      await this.users.createIndex({ tenantId: 1, sort: 1 }, { name: 'tenant_sort' });
      await this.appeals.createIndex({ tenantId: 1, sort: 1 }, { name: 'tenant_sort' });
      await this.reports.createIndex({ tenantId: 1, sort: 1 }, { name: 'tenant_sort' });
      // Leading field targetId: a record's or user's open reports (the counts in their views), by equality.
      await this.reports.createIndex({ targetId: 1, status: 1 }, { name: 'target_status' });
    });
    await this.outbox.ensureIndexes();
    await this.migrateOutbox();
  }

  /**
   * Events stored before the outbox collection existed carry `published: false` until published: each such event gets
   * its outbox copy, then loses the flag (an equality on the indexed flag, so a store with none costs one empty read).
   * Older moderators still running go on publishing their own appends and marking them; stop them before upgrading,
   * or restart the new ones after, so that what they left unpublished is moved too.
   */
  private async migrateOutbox(): Promise<void> {
    for (;;) {
      const legacy = await guarded(() => this.events.find({ published: false }).limit(MIGRATE_CHUNK).toArray());
      if (legacy.length === 0) return;
      await this.outbox.restore(legacy);
      for (const doc of legacy) {
        await guarded(() => this.events.updateOne({ _id: doc._id }, { $unset: { published: '' } }));
      }
    }
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
      const snapshot =
        kind === 'record'
          ? await this.records.findOne({ _id: id })
          : kind === 'user'
            ? await this.users.findOne({ _id: id })
            : await this.reports.findOne({ _id: id });
      let state: AnyState | null = snapshot;
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

  /**
   * Appends the events staged on every stream in one insertMany (StreamConflict if another writer took a version
   * first), then projects each stream that has events to project: its new ones, or a tail read past a stale snapshot.
   * Returns the events appended.
   */
  async commit(...streams: Loaded<AnyState>[]): Promise<DomainEvent[]> {
    const events = streams.flatMap((stream) => stream.events);
    try {
      await this.append(events);
    } catch (err) {
      if (!(err instanceof StreamConflict) || err.appended.length === 0) throw err;
      // The streams whose events all went in before the conflict are committed: project them now, or nobody might
      // (a writer that gives up after its retries leaves them to the next writer of the stream).
      const stored = new Set(err.appended.map((event) => event.id));
      await this.project(streams.filter((loaded) => loaded.events.every((event) => stored.has(event.id))));
      throw err;
    }
    await this.project(streams);
    return events;
  }

  private async project(streams: Loaded<AnyState>[]): Promise<void> {
    await Promise.all(
      streams.map(async (loaded) => {
        const projected = [...loaded.tail, ...loaded.events];
        if (projected.length === 0) return;
        if (loaded.kind === 'record') await this.projectRecord(loaded.state as RecordState | null, loaded.created);
        else if (loaded.kind === 'report') await this.projectReport(loaded.state as ReportState | null, loaded.created);
        else await this.projectUser(loaded.state as UserState | null, projected, loaded.created);
      }),
    );
  }

  /**
   * Appends events of streams that have no projection (a rule's RuleDegraded); how many went in before a version
   * already taken.
   */
  async appendUnprojected(events: DomainEvent[]): Promise<number> {
    return this.appends.append(events.map((event) => ({ ...event, _id: event.id })));
  }

  /** Appends the events of several streams (see EventAppends); StreamConflict if any version was taken. */
  private async append(events: DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    const stored = await this.appends.append(events.map((event) => ({ ...event, _id: event.id })));
    if (stored < events.length) throw new StreamConflict(events.slice(0, stored));
  }

  /** New record projections in one unordered insert: per document, inserted or already there. */
  private async insertRecords(docs: readonly RecordState[]): Promise<boolean[]> {
    try {
      await guarded(() => this.records.insertMany([...docs], { ordered: false }));
      return docs.map(() => true);
    } catch (err) {
      if (!(err instanceof MongoBulkWriteError)) throw err;
      const failures = ([] as WriteError[]).concat(err.writeErrors);
      // Anything but a duplicate fails the whole group, as it would each insert on its own.
      if (failures.some((failure) => failure.code !== 11000)) throw toAppError(err);
      const duplicates = new Set(failures.map((failure) => failure.index));
      return docs.map((_, index) => !duplicates.has(index));
    }
  }

  /**
   * Writes a record projection unless a newer version is already there (replays never go backwards). `created`: the
   * stream had no projection when loaded, so an insert is tried first. A conditional replace that misses, then an
   * insert that collides, means a newer version is stored. (No upsert with a non-`_id` filter: FerretDB answers that
   * with a collection scan.)
   *
   * FerretDB v1 runs the conditional replace as read, filter, then write by `_id`, so a writer of an older version can
   * land after a newer one. Each writer therefore checks, after writing, that its version is the stream's newest; if
   * not, it folds the stream again and writes that. The last write is then always by a writer that saw no newer event,
   * which (events being appended before they are projected) is the newest version.
   */
  async projectRecord(state: RecordState | null, created = false): Promise<void> {
    let current = state;
    let insertFirst = created;
    for (let round = 0; current && round < CATCH_UP_ROUNDS; round += 1) {
      const target: RecordState = current;
      const inserted = await guarded(() =>
        this.replaceOrInsert(
          () => this.recordInserts.write(target),
          async () =>
            (await this.records.replaceOne({ _id: target._id, version: { $lt: target.version } }, target))
              .matchedCount > 0,
          insertFirst,
        ),
      );
      // Inserted: there was no document, so every other writer's write comes after this one and reads it first; an
      // older one then leaves it, a newer one replaces it and checks for itself.
      if (inserted || !(await this.hasEventAfter(recordStream(target._id), target.version))) return;
      current = (await this.loadRecord(target._id, true)).state;
      insertFirst = false;
    }
  }

  /**
   * Writes a report projection unless a newer version is there, and checks it is the newest, as `projectRecord` does
   * (the same FerretDB behaviour forces the same shape).
   */
  async projectReport(state: ReportState | null, created = false): Promise<void> {
    let current = state;
    let insertFirst = created;
    for (let round = 0; current && round < CATCH_UP_ROUNDS; round += 1) {
      const target: ReportState = current;
      const inserted = await guarded(() =>
        this.replaceOrInsert(
          () => writtenUnlessDuplicate(this.reports.insertOne(target)),
          async () =>
            (await this.reports.replaceOne({ _id: target._id, version: { $lt: target.version } }, target))
              .matchedCount > 0,
          insertFirst,
        ),
      );
      if (inserted || !(await this.hasEventAfter(reportStream(target._id), target.version))) return;
      current = (await this.loadReport(target._id)).state;
      insertFirst = false;
    }
  }

  /**
   * Claims the reporter's open report on a target (`key`, see `reportClaimKey`) for `reportId`. Returns null when the
   * claim is this report's now, else the report that holds it. A unique `_id` insert, since FerretDB v1 has no atomic
   * conditional update: of two racing reports one inserts, the other learns the first one's id.
   */
  async claimReport(key: string, tenantId: string, reportId: string): Promise<string | null> {
    return guarded(async () => {
      if (
        await writtenUnlessDuplicate(
          this.reportClaims.insertOne({ _id: key, tenantId, reportId, createdAt: new Date() }),
        )
      )
        return null;
      const holder = await this.reportClaims.findOne({ _id: key });
      // Released between the insert and the read: the caller claims again.
      return holder?.reportId ?? '';
    });
  }

  /**
   * Releases a decided report's claim, so that the reporter can report the target again. FerretDB runs the delete as
   * read, filter, then delete by `_id`: two releases of the same claim racing a new report's claim could remove the
   * new one, whose reporter could then open a second report on the target. Only a retried decision races like that,
   * and the worst case is one report too many, never one lost.
   */
  async releaseReportClaim(key: string, reportId: string): Promise<void> {
    await guarded(() => this.reportClaims.deleteOne({ _id: key, reportId }));
  }

  /** Keeps an end user's email for a report (see COLLECTIONS.reportContacts); a second write keeps the first. */
  async saveReportContact(reportId: string, tenantId: string, email: string): Promise<void> {
    await guarded(() =>
      writtenUnlessDuplicate(this.reportContacts.insertOne({ _id: reportId, tenantId, email, createdAt: new Date() })),
    );
  }

  /**
   * Writes a user projection and the appeals touched by `events`, each guarded by the user stream version, then checks
   * it is the newest as `projectRecord` does.
   */
  async projectUser(state: UserState | null, events: DomainEvent[], created = false): Promise<void> {
    let current = state;
    let tail = events;
    let insertFirst = created;
    // Nothing new since the snapshot: the projection is already this state.
    for (let round = 0; current && tail.length > 0 && round < CATCH_UP_ROUNDS; round += 1) {
      const target: UserState = current;
      const { _id, ...fields } = target;
      const inserted = await guarded(async () => {
        const done = await this.replaceOrInsert(
          () => writtenUnlessDuplicate(this.users.insertOne(target)),
          async () =>
            (await this.users.updateOne({ _id, version: { $lt: target.version } }, { $set: fields })).matchedCount > 0,
          insertFirst,
        );
        for (const event of tail) await this.projectAppeal(event);
        return done;
      });
      // As in projectRecord; appeals have conditional writes of their own, so their streams are always checked.
      const appeals = tail.some((event) => event.type === 'AppealCreated' || event.type === 'AppealDecided');
      if ((inserted && !appeals) || !(await this.hasEventAfter(userStream(_id), target.version))) return;
      const loaded = await this.loadUser(_id, true);
      current = loaded.state;
      tail = loaded.tail;
      insertFirst = false;
    }
  }

  /** Whether the stream has an event past `version` (one index lookup on `{stream, version}`). */
  private async hasEventAfter(stream: string, version: number): Promise<boolean> {
    return guarded(
      async () => (await this.events.findOne({ stream, version: version + 1 }, { projection: { _id: 1 } })) !== null,
    );
  }

  /**
   * Returns true when the document was inserted (there was none before). `insert` answers false when a document with
   * its `_id` was already there.
   */
  private async replaceOrInsert(
    insert: () => Promise<boolean>,
    replace: () => Promise<boolean>,
    insertFirst: boolean,
  ): Promise<boolean> {
    if (insertFirst) {
      if (await insert()) return true;
      await replace();
      return false;
    }
    if (await replace()) return false;
    if (await insert()) return true;
    // Another writer inserted between the replace and the insert; its version may be older than this one.
    await replace();
    return false;
  }

  private async projectAppeal(event: DomainEvent): Promise<void> {
    const at = new Date(event.occurredAt);
    if (event.type === 'AppealCreated') {
      const { appealId, userId, text } = event.data;
      await writtenUnlessDuplicate(
        this.appeals.updateOne(
          { _id: appealId, version: { $lt: event.version } },
          {
            $set: {
              tenantId: event.tenantId,
              userId,
              status: 'Open',
              text,
              version: event.version,
              sort: appealId,
              createdAt: at,
              updatedAt: at,
            },
          },
          { upsert: true },
        ),
      );
    } else if (event.type === 'AppealDecided') {
      const set: Partial<AppealDoc> = { status: event.data.status, version: event.version, updatedAt: at };
      if (event.data.reason) set.decisionReason = event.data.reason;
      await this.appeals.updateOne({ _id: event.data.appealId, version: { $lt: event.version } }, { $set: set });
    }
  }

  /** Every event of one stream, oldest first. */
  async readStream(stream: string, tenantId: string): Promise<DomainEvent[]> {
    return guarded(async () => {
      const docs = await this.events.find({ stream, tenantId }).sort({ version: 1 }).toArray();
      return docs.map(eventOf);
    });
  }

  /**
   * Stores a user's flagged count: an upsert by `_id` (two first writers racing: the loser replaces); a count of 0 is
   * no document, as after a rebuild.
   */
  async setFlaggedCount(userId: string, count: number): Promise<void> {
    if (count === 0) {
      await guarded(() => this.flaggedCounts.deleteOne({ _id: userId }));
      return;
    }
    await guarded(() =>
      this.replaceOrInsert(
        () => writtenUnlessDuplicate(this.flaggedCounts.insertOne({ _id: userId, count })),
        async () => (await this.flaggedCounts.replaceOne({ _id: userId }, { count })).matchedCount > 0,
        false,
      ),
    );
  }

  async countFlagged(tenantId: string, userId: string): Promise<number> {
    return guarded(() => this.records.countDocuments({ tenantId, userId, status: 'Flagged', deleted: false }));
  }

  /**
   * Counts the user's flagged records and stores the count on the user's projection, before any status it leads to:
   * a reader that sees the new status also sees the count behind it.
   */
  async refreshFlaggedCount(tenantId: string, userId: string): Promise<number> {
    const count = await this.countFlagged(tenantId, userId);
    await this.setFlaggedCount(userId, count);
    return count;
  }

  /** The user an appeal of this tenant belongs to, or null. */
  async appealUser(tenantId: string, appealId: string): Promise<string | null> {
    const appeal = await guarded(() =>
      this.appeals.findOne({ _id: appealId, tenantId }, { projection: { userId: 1 } }),
    );
    return appeal?.userId ?? null;
  }

  /**
   * Drops the projections (`records`, `users`, their flagged counts, `appeals`, `reports` and the claims of open
   * reports) and creates their indexes again, for a rebuild. Report contacts are not derived from events: they stay.
   */
  async dropProjections(): Promise<void> {
    const existing = new Set((await this.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
    for (const collection of [
      this.records,
      this.users,
      this.flaggedCounts,
      this.appeals,
      this.reports,
      this.reportClaims,
    ]) {
      if (existing.has(collection.collectionName)) await collection.drop();
    }
    await this.ensureIndexes();
  }

  /** Every stored event, stream by stream, each stream oldest first (a full read, for a rebuild). */
  async *allEventsByStream(): AsyncGenerator<DomainEvent> {
    const cursor = this.events.find({}, { projection: { published: 0 } }).sort({ stream: 1, version: 1 });
    for await (const doc of cursor) yield eventOf(doc);
  }

  /** Flagged, not deleted records per user (a full read, for a rebuild). */
  async *countFlaggedByUser(): AsyncGenerator<{ userId: string; count: number }> {
    const counts = this.records.aggregate<{ _id: string; count: number }>([
      { $match: { status: 'Flagged', deleted: false, userId: { $exists: true } } },
      { $group: { _id: '$userId', count: { $sum: 1 } } },
    ]);
    for await (const { _id: userId, count } of counts) yield { userId, count };
  }

  async ping(): Promise<void> {
    await guarded(() => this.db.command({ ping: 1 }));
  }
}

/** True once the write is done, false when it met a duplicate key (a document with its `_id` was already there). */
async function writtenUnlessDuplicate(insert: Promise<unknown>): Promise<boolean> {
  try {
    await insert;
    return true;
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    return false;
  }
}
