import { COLLECTIONS, type DomainEvent } from '@vigil/proto';
import { recordStream, reportStream, userStream } from '../domain/stream-names';
import { insertEach, storeTraits, WriteGroups } from '@vigil/proto/platform';
import { type Collection, type Db } from 'mongodb';
import type { RecordState } from '../domain/record';
import type { ReportState } from '../domain/report';
import type { Loaded, StreamKind } from '../domain/stream';
import type { UserState } from '../domain/user';
import { replaceOrInsert, writtenUnlessDuplicate } from './conditional-writes';
import { MAX_GROUP, type AnyState, type EventStreams, type Snapshots } from './event-streams';
import { guarded } from './mongo-errors';

/** Bound on re-projecting a stream that other writers keep extending (each round is one more write). */
const CATCH_UP_ROUNDS = 8;

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

/** What catching up with other writers reads of the streams. */
export type StreamReads = Pick<EventStreams, 'hasEventAfter' | 'loadRecord' | 'loadUser' | 'loadReport'>;

/**
 * The `records`, `users`, `appeals` and `reports` projections of the event streams. Each document doubles as its
 * stream's snapshot. A projection never goes backwards: a write is conditioned on the stored version, then checked to
 * be the newest (see projectRecord).
 */
export class Projections implements Snapshots {
  private readonly records: Collection<RecordState>;
  private readonly users: Collection<UserState>;
  private readonly appeals: Collection<AppealDoc>;
  private readonly reports: Collection<ReportState>;
  /** Concurrent commits' new record projections inserted together: true inserted, false already there. */
  private readonly recordInserts: WriteGroups<RecordState, boolean>;

  constructor(
    private readonly db: Db,
    private readonly streams: StreamReads,
    /** Whether conditional writes are atomic; when not given, the store is asked (see `conditionalWritesAtomic`). */
    private readonly atomicWrites?: boolean,
  ) {
    // Optional fields stay absent: stored `null`s would not parse as the optional fields of the event schemas.
    const options = { ignoreUndefined: true };
    this.records = db.collection<RecordState>(COLLECTIONS.records, options);
    this.users = db.collection<UserState>(COLLECTIONS.users, options);
    this.appeals = db.collection<AppealDoc>(COLLECTIONS.appeals, options);
    this.reports = db.collection<ReportState>(COLLECTIONS.reports, options);
    this.recordInserts = new WriteGroups((docs) => this.insertRecords(docs), MAX_GROUP);
  }

  /**
   * Whether the store applies a write's filter and the write as one step. MongoDB does: a replace conditioned on an
   * older version can never land over a newer one, so a projection written (or found newer) is the newest, with no
   * read to check it. FerretDB v1 does not (it reads, filters, then writes by `_id`; see projectRecord), and says so in
   * `buildInfo.ferretdbVersion` (see storeTraits: asked once per client).
   */
  private async conditionalWritesAtomic(): Promise<boolean> {
    return this.atomicWrites ?? !(await guarded(() => storeTraits(this.db))).ferretdb;
  }

  /**
   * After a conditional write of `version` (not an insert into nothing): whether the stream has no event past it, so
   * that the projection stands. Without atomic writes, one read of the stream's next version.
   */
  private async newest(stream: string, version: number): Promise<boolean> {
    if (await this.conditionalWritesAtomic()) return true;
    return !(await this.streams.hasEventAfter(stream, version));
  }

  /** Idempotent: creating an index that exists is a no-op. */
  async ensureIndexes(): Promise<void> {
    await guarded(async () => {
      await this.records.createIndex({ tenantId: 1, sort: 1 }, { name: 'tenant_sort' });
      // Leading field userId: a user's records (countFlagged), whatever the size of the tenant.
      await this.records.createIndex({ userId: 1, status: 1 }, { name: 'user_status' });
      await this.users.createIndex({ tenantId: 1, sort: 1 }, { name: 'tenant_sort' });
      await this.appeals.createIndex({ tenantId: 1, sort: 1 }, { name: 'tenant_sort' });
      await this.reports.createIndex({ tenantId: 1, sort: 1 }, { name: 'tenant_sort' });
      // Leading field targetId: a record's or user's open reports (the counts in their views), by equality.
      await this.reports.createIndex({ targetId: 1, status: 1 }, { name: 'target_status' });
      // Leading field complaintKey: a tenant's complaints in one state (the queue of open ones), by equality.
      await this.reports.createIndex({ complaintKey: 1 }, { name: 'complaint_key' });
    });
  }

  /** The projection a stream's load starts from (one read by `_id`). */
  snapshot(kind: StreamKind, id: string): Promise<AnyState | null> {
    return kind === 'record'
      ? this.records.findOne({ _id: id })
      : kind === 'user'
        ? this.users.findOne({ _id: id })
        : this.reports.findOne({ _id: id });
  }

  /** Projects each stream that has events to project: its new ones, or a tail read past a stale snapshot. */
  async project(streams: Loaded<AnyState>[]): Promise<void> {
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

  /** New record projections in one unordered insert: per document, inserted or already there. */
  private insertRecords(docs: readonly RecordState[]): Promise<boolean[]> {
    // Anything but proven duplicates fails the whole group, as it would each insert on its own.
    return guarded(() => insertEach(this.records, [...docs]));
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
        replaceOrInsert(
          () => this.recordInserts.write(target),
          async () =>
            (await this.records.replaceOne({ _id: target._id, version: { $lt: target.version } }, target))
              .matchedCount > 0,
          insertFirst,
        ),
      );
      // Inserted: there was no document, so every other writer's write comes after this one and reads it first; an
      // older one then leaves it, a newer one replaces it and checks for itself.
      if (inserted || (await this.newest(recordStream(target._id), target.version))) return;
      current = (await this.streams.loadRecord(target._id, true)).state;
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
        replaceOrInsert(
          () => writtenUnlessDuplicate(this.reports.insertOne(target)),
          async () =>
            (await this.reports.replaceOne({ _id: target._id, version: { $lt: target.version } }, target))
              .matchedCount > 0,
          insertFirst,
        ),
      );
      if (inserted || (await this.newest(reportStream(target._id), target.version))) return;
      current = (await this.streams.loadReport(target._id)).state;
      insertFirst = false;
    }
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
        const done = await replaceOrInsert(
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
      if ((inserted && !appeals) || (await this.newest(userStream(_id), target.version))) return;
      const loaded = await this.streams.loadUser(_id, true);
      current = loaded.state;
      tail = loaded.tail;
      insertFirst = false;
    }
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

  /** The user an appeal of this tenant belongs to, or null. */
  async appealUser(tenantId: string, appealId: string): Promise<string | null> {
    const appeal = await guarded(() =>
      this.appeals.findOne({ _id: appealId, tenantId }, { projection: { userId: 1 } }),
    );
    return appeal?.userId ?? null;
  }

  /** The collections a rebuild drops and fills again. */
  get rebuilt(): Collection[] {
    return [this.records, this.users, this.appeals, this.reports] as unknown as Collection[];
  }
}
