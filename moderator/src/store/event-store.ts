import type { DomainEvent } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';
import type { RecordState } from '../domain/record';
import type { ReportState } from '../domain/report';
import type { Loaded } from '../domain/stream';
import type { UserState } from '../domain/user';
import { EventStreams, StreamConflict, type AnyState } from './event-streams';
import { FlaggedCounts } from './flagged-counts';
import { guarded } from './mongo-errors';
import { OutboxStore } from './outbox-store';
import { Projections } from './projections';
import { ReportClaims } from './report-claims';

// The names this module has always exported, from the files that now hold them.
export { eventOf, type EventDoc } from './event-doc';
export { StreamConflict } from './event-streams';
export type { FlaggedCountDoc } from './flagged-counts';
export type { AppealDoc } from './projections';
export type { ReportClaimDoc, ReportContactDoc } from './report-claims';

/**
 * The moderator's event store, as the use cases see it: event streams (event-streams.ts), their projections
 * (projections.ts), users' flagged counts (flagged-counts.ts), report claims and contacts (report-claims.ts), and the
 * outbox (outbox-store.ts). A use case loads streams, decides and stages in the domain, then `commit`s: one append of
 * every stream's events, then their projections.
 */
export class EventStore {
  /** The copies of appended events still to publish (the outbox relay's side of the store). */
  readonly outbox: OutboxStore;
  private readonly streams: EventStreams;
  private readonly projections: Projections;
  private readonly flagged: FlaggedCounts;
  readonly reportClaims: ReportClaims;

  constructor(
    private readonly db: Db,
    { instanceId }: { instanceId?: string } = {},
  ) {
    this.outbox = new OutboxStore(db, { instanceId });
    // The streams load from the projections' snapshots; the projections catch up by reading the streams.
    this.streams = new EventStreams(db, this.outbox, { snapshot: (kind, id) => this.projections.snapshot(kind, id) });
    this.projections = new Projections(db, this.streams);
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

  loadRecord(recordId: string, fresh: boolean): Promise<Loaded<RecordState>> {
    return this.streams.loadRecord(recordId, fresh);
  }

  loadUser(userId: string, fresh: boolean): Promise<Loaded<UserState>> {
    return this.streams.loadUser(userId, fresh);
  }

  /** A report stream, always with the events past its projection (see EventStreams.loadReport). */
  loadReport(reportId: string): Promise<Loaded<ReportState>> {
    return this.streams.loadReport(reportId);
  }

  /** A record's stream and, when `userId` is given, its user's, loaded side by side. */
  async loadRecordAndUser(
    recordId: string,
    userId: string | undefined,
    fresh: boolean,
  ): Promise<{ record: Loaded<RecordState>; user?: Loaded<UserState> }> {
    const [record, user] = await Promise.all([
      this.streams.loadRecord(recordId, fresh),
      userId ? this.streams.loadUser(userId, fresh) : undefined,
    ]);
    return user ? { record, user } : { record };
  }

  /**
   * Stores the flagged counts staged on user streams (Loaded.flaggedCount), then appends the events staged on every
   * stream in one insertMany (StreamConflict if another writer took a version first), then projects each stream that
   * has events to project: its new ones, or a tail read past a stale snapshot. Returns the events appended.
   */
  async commit(...streams: Loaded<AnyState>[]): Promise<DomainEvent[]> {
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
      // The streams whose events all went in before the conflict are committed: project them now, or nobody might
      // (a writer that gives up after its retries leaves them to the next writer of the stream).
      const stored = new Set(err.appended.map((event) => event.id));
      await this.projections.project(streams.filter((loaded) => loaded.events.every((event) => stored.has(event.id))));
      throw err;
    }
    await this.projections.project(streams);
    return events;
  }

  projectRecord(state: RecordState | null, created = false): Promise<void> {
    return this.projections.projectRecord(state, created);
  }

  projectReport(state: ReportState | null, created = false): Promise<void> {
    return this.projections.projectReport(state, created);
  }

  /** See EventStreams.appendUnprojected. */
  appendUnprojected(events: DomainEvent[]): Promise<number> {
    return this.streams.appendUnprojected(events);
  }

  projectUser(state: UserState | null, events: DomainEvent[], created = false): Promise<void> {
    return this.projections.projectUser(state, events, created);
  }

  claimReport(key: string, tenantId: string, reportId: string): Promise<string | null> {
    return this.reportClaims.claimReport(key, tenantId, reportId);
  }

  releaseReportClaim(key: string, reportId: string): Promise<void> {
    return this.reportClaims.releaseReportClaim(key, reportId);
  }

  saveReportContact(reportId: string, tenantId: string, email: string, retentionDays: number): Promise<void> {
    return this.reportClaims.saveReportContact(reportId, tenantId, email, retentionDays);
  }

  /** See ReportClaims.eraseContactsOf. */
  eraseContactsOf(day: string): Promise<number> {
    return this.reportClaims.eraseContactsOf(day);
  }

  /** See ReportClaims.contactsErasedThrough. */
  contactsErasedThrough(): Promise<string | undefined> {
    return this.reportClaims.contactsErasedThrough();
  }

  markContactsErasedThrough(day: string): Promise<void> {
    return this.reportClaims.markContactsErasedThrough(day);
  }

  /** See ReportClaims.oldestContactDue. */
  oldestContactDue(): Promise<string | undefined> {
    return this.reportClaims.oldestContactDue();
  }

  readStream(stream: string, tenantId: string): Promise<DomainEvent[]> {
    return this.streams.readStream(stream, tenantId);
  }

  setFlaggedCount(userId: string, count: number): Promise<void> {
    return this.flagged.setFlaggedCount(userId, count);
  }

  countFlagged(tenantId: string, userId: string): Promise<number> {
    return this.flagged.countFlagged(tenantId, userId);
  }

  refreshFlaggedCount(tenantId: string, userId: string): Promise<number> {
    return this.flagged.refreshFlaggedCount(tenantId, userId);
  }

  appealUser(tenantId: string, appealId: string): Promise<string | null> {
    return this.projections.appealUser(tenantId, appealId);
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

  allEventsByStream(): AsyncGenerator<DomainEvent> {
    return this.streams.allEventsByStream();
  }

  countFlaggedByUser(): AsyncGenerator<{ userId: string; count: number }> {
    return this.flagged.countFlaggedByUser();
  }

  async ping(): Promise<void> {
    await guarded(() => this.db.command({ ping: 1 }));
  }
}
