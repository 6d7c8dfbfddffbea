import { COLLECTIONS, DEFAULT_REPORTER_EMAIL_RETENTION_DAYS } from '@vigil/proto';
import { upsertRetried } from '@vigil/proto/platform';
import type { Collection, Db } from 'mongodb';
import { writtenUnlessDuplicate } from './conditional-writes';
import { guarded } from './mongo-errors';

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
  /** The tenant's `reporterEmailRetentionDays` run out: no read uses the address after this time. */
  expiresAt?: Date;
  /**
   * The UTC day (`YYYY-MM-DD`) the daily erasure deletes the document: the day after `expiresAt`. A top-level
   * equality, so the erasure reads only what is due.
   */
  eraseDay?: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC day of a time, `YYYY-MM-DD`. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

/** A reporter's one open report per target (`report_claims`), and the emails end users gave (`report_contacts`). */
export class ReportClaims {
  readonly claims: Collection<ReportClaimDoc>;
  private readonly contacts: Collection<ReportContactDoc>;
  private readonly erasure: Collection<{ _id: string; day: string; updatedAt: Date }>;

  constructor(db: Db) {
    this.erasure = db.collection(COLLECTIONS.contactErasure);
    this.claims = db.collection<ReportClaimDoc>(COLLECTIONS.reportClaims, { ignoreUndefined: true });
    this.contacts = db.collection<ReportContactDoc>(COLLECTIONS.reportContacts, { ignoreUndefined: true });
  }

  /**
   * Claims the reporter's open report on a target (`key`, see `reportClaimKey`) for `reportId`. Returns null when the
   * claim is this report's now, else the report that holds it. A unique `_id` insert, since FerretDB v1 has no atomic
   * conditional update: of two racing reports one inserts, the other learns the first one's id.
   */
  async claimReport(key: string, tenantId: string, reportId: string): Promise<string | null> {
    return guarded(async () => {
      if (await writtenUnlessDuplicate(this.claims.insertOne({ _id: key, tenantId, reportId, createdAt: new Date() })))
        return null;
      const holder = await this.claims.findOne({ _id: key });
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
    await guarded(() => this.claims.deleteOne({ _id: key, reportId }));
  }

  /**
   * Keeps an end user's email for a report (see COLLECTIONS.reportContacts) for `retentionDays` after the report came
   * (`receivedAt`); a second write keeps the first.
   */
  async saveReportContact(
    reportId: string,
    tenantId: string,
    email: string,
    retentionDays: number,
    receivedAt: Date = new Date(),
  ): Promise<void> {
    const createdAt = receivedAt;
    const expiresAt = new Date(createdAt.getTime() + retentionDays * DAY_MS);
    const eraseDay = utcDay(new Date(expiresAt.getTime() + DAY_MS));
    await guarded(() =>
      writtenUnlessDuplicate(
        this.contacts.insertOne({ _id: reportId, tenantId, email, createdAt, expiresAt, eraseDay }),
      ),
    );
  }

  async ensureIndexes(): Promise<void> {
    await guarded(() => this.contacts.createIndex({ eraseDay: 1 }, { name: 'erase_day' }));
  }

  /** Erases the contacts due on `day` (an equality on the `erase_day` index); returns how many. */
  async eraseContactsOf(day: string): Promise<number> {
    return (await guarded(() => this.contacts.deleteMany({ eraseDay: day }))).deletedCount;
  }

  /** The last day whose contacts were erased (see ContactErasure), or undefined before the first. */
  async contactsErasedThrough(): Promise<string | undefined> {
    return (await guarded(() => this.erasure.findOne({ _id: COLLECTIONS.reportContacts })))?.day;
  }

  async markContactsErasedThrough(day: string): Promise<void> {
    await guarded(() =>
      upsertRetried(() =>
        this.erasure.updateOne(
          { _id: COLLECTIONS.reportContacts },
          { $set: { day, updatedAt: new Date() } },
          { upsert: true },
        ),
      ),
    );
  }

  /**
   * The oldest day a stored contact is due, for the erasure's first pass: one read of every contact, once. A contact
   * an earlier release stored without its day gets it here (from its expiry, or the default retention).
   */
  async oldestContactDue(): Promise<string | undefined> {
    const docs = await guarded(() =>
      this.contacts.find({}, { projection: { eraseDay: 1, expiresAt: 1, createdAt: 1 } }).toArray(),
    );
    let oldest: string | undefined;
    for (const doc of docs) {
      let day = doc.eraseDay;
      if (day === undefined) {
        const expiresAt =
          doc.expiresAt ?? new Date(doc.createdAt.getTime() + DEFAULT_REPORTER_EMAIL_RETENTION_DAYS * DAY_MS);
        day = utcDay(new Date(expiresAt.getTime() + DAY_MS));
        const eraseDay = day;
        await guarded(() => this.contacts.updateOne({ _id: doc._id }, { $set: { eraseDay, expiresAt } }));
      }
      if (oldest === undefined || day < oldest) oldest = day;
    }
    return oldest;
  }
}
