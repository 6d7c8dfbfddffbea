import type { Gathering } from '@vigil/proto/platform';
import type { DomainEvent } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';
import type { RecordState } from '../domain/record';
import type { Loaded } from '../domain/stream';
import type { UserState } from '../domain/user';
import { EventStreams, StreamConflict, type AnyState } from './event-streams';
import { FlaggedCounts } from './flagged-counts';
import { guarded } from './mongo-errors';
import { OutboxStore } from './outbox-store';
import { Projections } from './projections';
import { ReportClaims } from './report-claims';

// The names this module has always exported, from the files that now hold them.
export { type EventDoc } from './event-doc';
export { StreamConflict } from './event-streams';
export type { FlaggedCountDoc } from './flagged-counts';
export type { AppealDoc } from './projections';
/**
 * The moderator's event store: its pieces, which callers use directly (event streams in event-streams.ts, their
 * projections in projections.ts, users' flagged counts in flagged-counts.ts, report claims and contacts in
 * report-claims.ts, the outbox in outbox-store.ts), and what spans them. A use case loads streams, decides and stages
 * in the domain, then `commit`s: one append of every stream's events, then their projections.
 */
export class EventStore {
  /** The outbox slots of appended events still to publish (the outbox relay's side of the store). */
  readonly outbox: OutboxStore;
  /** The streams themselves: loads, reads, appends without a projection. */
  readonly streams: EventStreams;
  /** The read model the commits keep (records, users, appeals, reports). */
  readonly projections: Projections;
  /** Users' flagged counts, staged on user streams and stored before their events. */
  readonly flagged: FlaggedCounts;
  /** Reporters' claims on targets and their contact emails (erased after the tenant's retention). */
  readonly reportClaims: ReportClaims;

  constructor(
    private readonly db: Db,
    /** `atomicWrites`: whether the store's conditional writes are atomic (see Projections); asked when not given. */
    {
      instanceId,
      atomicWrites,
      gathering,
    }: {
      instanceId?: string;
      atomicWrites?: boolean;
      /** The commands being worked on that the group appends wait for (see Gathering). */
      gathering?: Gathering;
    } = {},
  ) {
    this.outbox = new OutboxStore(db, { instanceId });
    // The streams load from the projections' snapshots; the projections catch up by reading the streams.
    this.streams = new EventStreams(
      db,
      this.outbox,
      { snapshot: (kind, id) => this.projections.snapshot(kind, id) },
      gathering,
    );
    this.projections = new Projections(db, this.streams, atomicWrites);
    this.flagged = new FlaggedCounts(db);
    this.reportClaims = new ReportClaims(db);
  }

  /** Idempotent: creating an index that exists is a no-op. */
  async ensureIndexes(): Promise<void> {
    await this.streams.ensureIndexes();
    await this.projections.ensureIndexes();
    await this.outbox.ensureIndexes();
    await this.reportClaims.ensureIndexes();
    await this.streams.migrateOutbox();
  }

  /**
   * A record's stream and, when `userId` is given, its user's, loaded side by side. `assumeNew`: the record's stream is
   * not read but taken to have no event yet (see EventStreams.assumedNewRecord).
   */
  async loadRecordAndUser(
    recordId: string,
    userId: string | undefined,
    fresh: boolean,
    { assumeNew = false }: { assumeNew?: boolean } = {},
  ): Promise<{ record: Loaded<RecordState>; user?: Loaded<UserState> }> {
    const [record, user] = await Promise.all([
      assumeNew ? this.streams.assumedNewRecord(recordId) : this.streams.loadRecord(recordId, fresh),
      userId ? this.streams.loadUser(userId, fresh) : undefined,
    ]);
    return user ? { record, user } : { record };
  }

  /**
   * Stores the flagged counts staged on user streams (Loaded.flaggedCount), then appends the events staged on every
   * stream in one insertMany (StreamConflict if another writer took a version first), then projects each stream that
   * has events to project: its new ones, or a tail read past a stale snapshot. Returns the events appended.
   */
  commit(...streams: Loaded<AnyState>[]): Promise<DomainEvent[]> {
    return this.commitTelling(() => undefined, ...streams);
  }

  /**
   * As `commit`, and `stored` hears of the events as soon as they are known appended (those before a conflict too),
   * before their projections are written: a projection write that fails after a successful append must not hide that
   * the events exist, since a retry then finds its command applied and appends nothing.
   */
  async commitTelling(stored: (events: DomainEvent[]) => void, ...streams: Loaded<AnyState>[]): Promise<DomainEvent[]> {
    for (const stream of streams) {
      if (stream.kind === 'user' && stream.flaggedCount !== undefined && stream.state) {
        await this.flagged.setFlaggedCount(stream.state._id, stream.flaggedCount);
      }
    }
    const events = streams.flatMap((stream) => stream.events);
    try {
      await this.streams.append(events);
    } catch (err) {
      if (!(err instanceof StreamConflict) || err.appended.length === 0) throw err;
      stored(err.appended);
      // The streams whose events all went in before the conflict are committed: project them now, or nobody might
      // (a writer that gives up after its retries leaves them to the next writer of the stream).
      const appended = new Set(err.appended.map((event) => event.id));
      await this.projections.project(
        streams.filter((loaded) => loaded.events.every((event) => appended.has(event.id))),
      );
      throw err;
    }
    if (events.length > 0) stored(events);
    await this.projections.project(streams);
    return events;
  }

  /**
   * Drops the projections (`records`, `users`, their flagged counts, `appeals`, `reports` and the claims of open
   * reports) and creates their indexes again, for a rebuild. Report contacts are not derived from events: they stay.
   */
  async dropProjections(): Promise<void> {
    const existing = new Set((await this.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name));
    const dropped: Collection[] = [
      ...this.projections.rebuilt,
      this.flagged.counts as unknown as Collection,
      this.reportClaims.claims as unknown as Collection,
    ];
    for (const collection of dropped) {
      if (existing.has(collection.collectionName)) await collection.drop();
    }
    await this.ensureIndexes();
  }

  async ping(): Promise<void> {
    await guarded(() => this.db.command({ ping: 1 }));
  }
}
