import { COLLECTIONS, type TdbAttempt, type TdbConfigDoc, type TdbSubmissionDoc } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';
import { DueQueue, type DueQueueTiming } from './due-queue';

export type TdbOutcome =
  | { state: 'pending'; dueAt: Date }
  | { state: 'submitted'; tdbUuid?: string; alreadyStored?: boolean }
  | { state: 'failed'; rejection?: Record<string, string[]> }
  | { state: 'skipped'; reason: string };

/** Submissions of statements of reasons to the Transparency Database (`tdb_submissions`) and the tenants' settings. */
export class TdbStore {
  readonly submissions: Collection<TdbSubmissionDoc>;
  private readonly queue: DueQueue<TdbSubmissionDoc>;
  private readonly configs: Collection<TdbConfigDoc>;

  constructor(db: Db, timing: DueQueueTiming) {
    this.submissions = db.collection(COLLECTIONS.tdbSubmissions);
    this.queue = new DueQueue(
      this.submissions,
      db.collection(COLLECTIONS.tdbLeases),
      db.collection(COLLECTIONS.dueCursors),
      COLLECTIONS.tdbSubmissions,
      timing,
    );
    this.configs = db.collection(COLLECTIONS.tdbConfigs);
  }

  async ensureIndexes(): Promise<void> {
    await this.queue.ensureIndexes();
    // The tenant's delivery log the gateway serves (GET /api/v1/transparency-database/submissions).
    await this.submissions.createIndex({ tenantId: 1, createdAt: -1 }, { name: 'tenant_log' });
  }

  /** The tenant's settings with the sealed token, or null when submission is off. */
  configOf(tenantId: string): Promise<TdbConfigDoc | null> {
    return this.configs.findOne({ _id: tenantId });
  }

  /** Inserts the submissions that do not exist yet (re-consumed events); returns how many this call inserted. */
  async insertNew(docs: TdbSubmissionDoc[]): Promise<number> {
    return (await this.queue.insertMany(docs)).size;
  }

  claim(now: Date, leaseMs: number, limit: number): Promise<TdbSubmissionDoc[]> {
    return this.queue.claim(now, leaseMs, limit);
  }

  /** Records the call that carried the submission (if one was made) and its outcome. */
  async finish(doc: TdbSubmissionDoc, attempt: TdbAttempt | undefined, next: TdbOutcome): Promise<void> {
    const final = next.state !== 'pending';
    await this.queue.finish(doc, next, {
      ...(attempt !== undefined ? { $push: { attempts: attempt }, $inc: { attemptCount: 1 } } : {}),
      $set: {
        ...(next.state === 'submitted' ? { submittedAt: new Date() } : {}),
        ...(next.state === 'submitted' && next.tdbUuid ? { tdbUuid: next.tdbUuid } : {}),
        ...(next.state === 'submitted' && next.alreadyStored ? { alreadyStored: true } : {}),
        ...(next.state === 'failed' && next.rejection ? { rejection: next.rejection } : {}),
        ...(next.state === 'skipped' ? { skipReason: next.reason } : {}),
        ...(attempt?.error !== undefined && next.state !== 'submitted' ? { lastError: attempt.error } : {}),
        ...(final ? { completedAt: new Date() } : {}),
      },
    });
  }

  pruneLeases(before: Date): Promise<number> {
    return this.queue.pruneLeases(before);
  }
}
