import { COLLECTIONS, type EmailAttempt, type EmailMessageDoc, type UserDoc } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';
import { DueQueue } from './due-queue';
import { attemptRecorded } from './job-finishes';
import type { DueQueueTiming } from './queued-doc';

export const emailMessageIdOf = (eventId: string): string => `eml_${eventId}`;

export class EmailStore {
  private readonly messages: Collection<EmailMessageDoc>;
  private readonly queue: DueQueue<EmailMessageDoc>;
  private readonly users: Collection<UserDoc>;
  private readonly tenants: Collection<{ _id: string; name: string }>;
  private readonly contacts: Collection<{ _id: string; tenantId: string; email: string; expiresAt?: Date }>;

  constructor(db: Db, timing: DueQueueTiming) {
    this.messages = db.collection(COLLECTIONS.emailMessages);
    this.queue = DueQueue.in(db, this.messages, COLLECTIONS.emailLeases, timing);
    this.users = db.collection(COLLECTIONS.users);
    this.tenants = db.collection(COLLECTIONS.tenants);
    this.contacts = db.collection(COLLECTIONS.reportContacts);
  }

  async ensureIndexes(): Promise<void> {
    await this.queue.ensureIndexes();
    // The per-user log the gateway serves (GET /users/{id}/emails).
    await this.messages.createIndex({ tenantId: 1, userId: 1, createdAt: -1 }, { name: 'user_log' });
  }

  userOf(userId: string): Promise<Pick<UserDoc, 'email' | 'name' | 'username'> | null> {
    return this.users.findOne({ _id: userId }, { projection: { email: 1, name: 1, username: 1 } });
  }

  /**
   * The address a reporter gave with a report (the moderator's `report_contacts`), while the tenant's retention runs;
   * null once it ran out or the contact was erased.
   */
  async reporterEmailOf(reportId: string, tenantId: string): Promise<string | null> {
    const contact = await this.contacts.findOne({ _id: reportId, tenantId });
    if (!contact || (contact.expiresAt && contact.expiresAt.getTime() <= Date.now())) return null;
    return contact.email;
  }

  async tenantNameOf(tenantId: string): Promise<string | undefined> {
    return (await this.tenants.findOne({ _id: tenantId }, { projection: { name: 1 } }))?.name;
  }

  /** Inserts the message unless it exists (a re-consumed event); true if this call inserted it. */
  insertNew(doc: EmailMessageDoc): Promise<boolean> {
    return this.queue.insertNew(doc);
  }

  /** Takes due messages, and ones whose worker's lease expired (see DueQueue.claim). */
  claim(now: Date, leaseMs: number, limit: number): Promise<EmailMessageDoc[]> {
    return this.queue.claim(now, leaseMs, limit);
  }

  /** Records an attempt (if one was made) and the outcome: `pending` again at `dueAt`, or final. */
  async finish(
    doc: EmailMessageDoc,
    attempt: EmailAttempt | undefined,
    next: { state: 'pending'; dueAt: Date } | { state: 'sent' | 'failed' } | { state: 'skipped'; reason: string },
  ): Promise<void> {
    const lastError = next.state === 'sent' || next.state === 'skipped' ? undefined : attempt?.error;
    await this.queue.finish(doc, next, {
      ...attemptRecorded(attempt),
      $set: {
        ...(next.state === 'sent' ? { sentAt: new Date() } : {}),
        ...(next.state === 'skipped' ? { skipReason: next.reason } : {}),
        ...(lastError !== undefined ? { lastError } : {}),
      },
    });
  }

  pruneLeases(before: Date): Promise<number> {
    return this.queue.pruneLeases(before);
  }
}
