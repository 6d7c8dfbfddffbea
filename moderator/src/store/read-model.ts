import { COLLECTIONS } from '@vigil/proto';
import type { Collection, Db, Filter } from 'mongodb';
import { ValidationError } from '../domain/errors';
import type { RecordState } from '../domain/record';
import type { ReportState } from '../domain/report';
import type { UserState } from '../domain/user';
import type { FlaggedCountDoc } from './flagged-counts';
import type { AppealDoc } from './projections';
import type { ReportContactDoc } from './report-claims';
import { guarded } from './mongo-errors';

export interface PageRequest {
  /** 1–100; 0 (unset) means 10. */
  limit: number;
  startingAfter?: string;
  endingBefore?: string;
  /** Walk from the newest document: `startingAfter` then moves towards older ones, `endingBefore` towards newer. */
  newestFirst?: boolean;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

/** Bounds on `sort` (the time-ordered id of a document's first event). */
export interface SortBounds {
  $gte?: string;
  $lt?: string;
}

export type UserView = UserState & { flaggedRecordsCount: number; openReportsCount: number };
export type RecordView = RecordState & { openReportsCount: number };
export type ReportView = ReportState & { targetOpenReports: number; email?: string };
type Sortable = { _id: string; tenantId: string; sort: string };

/** Equality criteria on a projection's fields, plus bounds on `sort`; each list goes through a `tenant_sort` index. */
export type Criteria<T> = Partial<Omit<T, 'sort'>> & { sort?: SortBounds };

/**
 * Reads of the projections (`records`, `users`, `appeals`, `reports`) for the query API: by id within a tenant, and pages in
 * `sort` order. Written only by the EventStore.
 */
export class ReadModel {
  private readonly records: Collection<RecordState>;
  private readonly users: Collection<UserState>;
  private readonly flaggedCounts: Collection<FlaggedCountDoc>;
  private readonly appeals: Collection<AppealDoc>;
  private readonly reports: Collection<ReportState>;
  private readonly reportContacts: Collection<ReportContactDoc>;

  constructor(db: Db) {
    this.records = db.collection<RecordState>(COLLECTIONS.records);
    this.users = db.collection<UserState>(COLLECTIONS.users);
    this.flaggedCounts = db.collection<FlaggedCountDoc>(COLLECTIONS.userFlaggedCounts);
    this.appeals = db.collection<AppealDoc>(COLLECTIONS.appeals);
    this.reports = db.collection<ReportState>(COLLECTIONS.reports);
    this.reportContacts = db.collection<ReportContactDoc>(COLLECTIONS.reportContacts);
  }

  async findRecord(tenantId: string, recordId: string): Promise<RecordView | null> {
    const record = await guarded(() => this.records.findOne({ _id: recordId, tenantId, deleted: false }));
    return record ? { ...record, openReportsCount: await this.openReports(tenantId, record._id) } : null;
  }

  async hasUser(tenantId: string, userId: string): Promise<boolean> {
    return (await guarded(() => this.users.findOne({ _id: userId, tenantId }, { projection: { _id: 1 } }))) !== null;
  }

  async findUser(tenantId: string, userId: string): Promise<UserView | null> {
    const user = await guarded(() => this.users.findOne({ _id: userId, tenantId }));
    return user ? (await this.withCounts([user]))[0]! : null;
  }

  findAppeal(tenantId: string, appealId: string): Promise<AppealDoc | null> {
    return guarded(() => this.appeals.findOne({ _id: appealId, tenantId }));
  }

  async pageRecords(
    tenantId: string,
    criteria: Criteria<RecordState>,
    request: PageRequest,
  ): Promise<Page<RecordView>> {
    const found = await page(this.records, tenantId, criteria as Filter<RecordState>, request);
    const items = await Promise.all(
      found.items.map(async (record) => ({
        ...record,
        openReportsCount: await this.openReports(tenantId, record._id),
      })),
    );
    return { ...found, items };
  }

  async pageUsers(tenantId: string, criteria: Criteria<UserState>, request: PageRequest): Promise<Page<UserView>> {
    const found = await page(this.users, tenantId, criteria as Filter<UserState>, request);
    return { ...found, items: await this.withCounts(found.items) };
  }

  /**
   * Each user with its flagged count and open reports (lookups by `_id` and by index equality, one each per user:
   * FerretDB v1 answers `$in` with a scan).
   */
  private withCounts(users: UserState[]): Promise<UserView[]> {
    return guarded(() =>
      Promise.all(
        users.map(async (user) => {
          const [counted, openReportsCount] = await Promise.all([
            this.flaggedCounts.findOne({ _id: user._id }),
            this.openReports(user.tenantId, user._id),
          ]);
          return { ...user, flaggedRecordsCount: counted?.count ?? 0, openReportsCount };
        }),
      ),
    );
  }

  /**
   * A record's or user's reports still open, counted when read (through the `target_status` index) rather than kept
   * in a counter: a counter written by several replicas could be left stale by a race, a count cannot.
   */
  openReports(tenantId: string, targetId: string): Promise<number> {
    return guarded(() => this.reports.countDocuments({ targetId, status: 'Open', tenantId }));
  }

  /** A report with its target's open count, and the reporter's email when `withEmail` (read by `_id`). */
  async findReport(tenantId: string, reportId: string, withEmail: boolean): Promise<ReportView | null> {
    const report = await guarded(() => this.reports.findOne({ _id: reportId, tenantId }));
    if (!report) return null;
    const [targetOpenReports, contact] = await Promise.all([
      this.openReports(tenantId, report.targetId),
      withEmail && report.reporter.hasEmail
        ? guarded(() => this.reportContacts.findOne({ _id: reportId, tenantId }))
        : Promise.resolve(null),
    ]);
    // Past the tenant's retention the address is not used, even before the daily erasure deleted it.
    const kept = contact && (!contact.expiresAt || contact.expiresAt.getTime() > Date.now());
    return { ...report, targetOpenReports, ...(kept ? { email: contact.email } : {}) };
  }

  async pageReports(
    tenantId: string,
    criteria: Criteria<ReportState>,
    request: PageRequest,
  ): Promise<Page<ReportView>> {
    const found = await page(this.reports, tenantId, criteria as Filter<ReportState>, request);
    const items = await Promise.all(
      found.items.map(async (report) => ({
        ...report,
        targetOpenReports: await this.openReports(tenantId, report.targetId),
      })),
    );
    return { ...found, items };
  }

  pageAppeals(tenantId: string, criteria: Criteria<AppealDoc>, request: PageRequest): Promise<Page<AppealDoc>> {
    return page(this.appeals, tenantId, criteria as Filter<AppealDoc>, request);
  }
}

/**
 * Cursor pagination over `sort` (time-ordered id of a document's first event), oldest first as Iffy does. With
 * `ending_before` the page is read newest first and reversed. A cursor must name a document of the same tenant
 * (Iffy looked it up across organisations); one the list's filters no longer select (its status changed, the record
 * was deleted since the page was read) still marks the place to go on from, so that acting on the items of a page
 * (the console's inbox, a bulk re-run) does not break the way to the next one.
 */
async function page<T extends Sortable>(
  collection: Collection<T>,
  tenantId: string,
  filter: Filter<T>,
  request: PageRequest,
): Promise<Page<T>> {
  const limit = request.limit === 0 ? 10 : request.limit;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new ValidationError('limit must be between 1 and 100', { path: 'limit' });
  }
  const cursorId = request.startingAfter ?? request.endingBefore;
  // `forward`: in the order of the page asked for; `ascending`: in the order of `sort`.
  const forward = request.startingAfter !== undefined || request.endingBefore === undefined;
  const ascending = forward !== (request.newestFirst === true);
  return guarded(async () => {
    const query = { ...filter, tenantId } as Filter<T>;
    if (cursorId !== undefined) {
      // Read by `_id` (an index equality on FerretDB).
      const cursor = await collection.findOne({ _id: cursorId, tenantId } as Filter<T>, { projection: { sort: 1 } });
      const name = request.startingAfter !== undefined ? 'starting_after' : 'ending_before';
      if (!cursor) {
        throw new ValidationError(`invalid ${name} cursor`, {
          path: name,
          issues: [{ path: [name], message: "not an item of this tenant's list" }],
        });
      }
      // A time bound on the same side stays: both hold ($gt next to $gte; the smaller $lt wins).
      const bounds = { ...((query as { sort?: { $gte?: string; $lt?: string } }).sort ?? {}) };
      if (ascending) Object.assign(bounds, { $gt: cursor.sort });
      else bounds.$lt = bounds.$lt !== undefined && bounds.$lt < cursor.sort ? bounds.$lt : cursor.sort;
      Object.assign(query, { sort: bounds });
    }
    const found = (await collection
      .find(query)
      .sort({ sort: ascending ? 1 : -1 })
      .limit(limit + 1)
      .toArray()) as T[];
    const hasMore = found.length > limit;
    const items = found.slice(0, limit);
    return { items: forward ? items : items.reverse(), hasMore };
  });
}
