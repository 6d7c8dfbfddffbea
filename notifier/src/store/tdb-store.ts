import {
  COLLECTIONS,
  TDB_LIMITS,
  VersionedCache,
  type TdbAttempt,
  type TdbConfigDoc,
  type TdbSubmissionDoc,
  type TenantVersions,
} from '@vigil/proto';
import { type TdbRetryDoc } from '../tdb/tdb-docs';
import { randomUUID } from 'node:crypto';
import { statementChunks, storeTraits } from '@vigil/proto/platform';
import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
import { DueQueue } from './due-queue';
import type { DueQueueTiming } from './queued-doc';
import { insertIgnoringDuplicates } from './insert-new';
import { storableText } from './storable-text';

/** What became of one statement after a call (or without one: `skipped`). */
export type TdbOutcome =
  | { state: 'pending'; dueAt: Date }
  | { state: 'submitted'; tdbUuid?: string; alreadyStored?: boolean }
  | { state: 'failed'; rejection?: Record<string, string[]> }
  | { state: 'skipped'; reason: string };

/** How long a tenant's settings are used without a newer configuration version seen, milliseconds: a backstop. */
const CONFIG_TTL_MS = 5_000;

/**
 * The Transparency Database's collections in the notifier: the tenants' settings (`tdb_configs`, the gateway's), the
 * submission log (`tdb_submissions`, one document per statement, written once its first call has its answer) and the
 * calls to make again (`tdb_retries`, a DueQueue). A statement that is submitted at the first call costs one share of
 * one insert; only failures are queued.
 */
export class TdbStore {
  readonly submissions: Collection<TdbSubmissionDoc>;
  readonly retries: Collection<TdbRetryDoc>;
  private readonly queue: DueQueue<TdbRetryDoc>;
  private readonly configs: Collection<TdbConfigDoc>;
  private readonly configCache?: VersionedCache<TdbConfigDoc | null>;

  /**
   * With `versions`, a tenant's settings are read once per configuration version (the gateway raises it with every
   * change of them, and the events that follow carry it), or again after CONFIG_TTL_MS.
   */
  constructor(
    private readonly db: Db,
    timing: DueQueueTiming,
    versions?: TenantVersions,
  ) {
    this.submissions = db.collection(COLLECTIONS.tdbSubmissions);
    this.retries = db.collection(COLLECTIONS.tdbRetries);
    this.queue = DueQueue.in(db, this.retries, COLLECTIONS.tdbLeases, timing);
    this.configs = db.collection(COLLECTIONS.tdbConfigs);
    if (versions) {
      this.configCache = new VersionedCache(versions, (tenantId) => this.configs.findOne({ _id: tenantId }), {
        ttlMs: CONFIG_TTL_MS,
      });
    }
  }

  async ensureIndexes(): Promise<void> {
    await this.queue.ensureIndexes();
    // The tenant's delivery log the gateway serves (GET /api/v1/transparency-database/submissions).
    await this.submissions.createIndex({ tenantId: 1, createdAt: -1 }, { name: 'tenant_log' });
    await this.adoptLegacyQueue();
  }

  /** The tenant's settings with the sealed token, or null when submission is off; at `configVersion` or later. */
  configOf(tenantId: string, configVersion?: number): Promise<TdbConfigDoc | null> {
    return this.configCache ? this.configCache.get(tenantId, configVersion) : this.configs.findOne({ _id: tenantId });
  }

  /**
   * Inserts the log documents that do not exist yet (statements of re-consumed events exist); one command, the
   * database's answer text in them as the store can hold it. Throws when the insert fails for another reason than a
   * duplicate: then some of the documents may be in, and inserting them again (alone) is safe.
   */
  async record(docs: TdbSubmissionDoc[]): Promise<void> {
    await insertIgnoringDuplicates(this.submissions, docs.map(storableSubmission));
  }

  /** Queues a call to make again (before its statements' log documents name it). */
  async queueRetry(job: TdbRetryDoc): Promise<void> {
    await this.queue.insertMany([job]);
  }

  /**
   * Queues a call to make again, held by this process until `holdMs` from now (leased, as if claimed), while its
   * statements' log documents are written: a retry made before them would find no document to record its outcome in,
   * and they would then be written pending, with no retry left to carry them. `releaseRetry` makes it due; a process
   * that dies first leaves it to be taken over once the hold ends. Returns the job as stored.
   */
  async queueHeldRetry(job: TdbRetryDoc, holdMs: number): Promise<TdbRetryDoc> {
    const held: TdbRetryDoc = { ...job, ...this.queue.leaseFields(new Date(Date.now() + holdMs)) };
    await this.queue.insertMany([held]);
    return held;
  }

  /** Makes a held retry (see queueHeldRetry) due at `dueAt`; a retry taken over since is left alone. */
  async releaseRetry(job: TdbRetryDoc, dueAt: Date): Promise<void> {
    await this.queue.finish(job, { state: 'pending', dueAt });
  }

  claim(now: Date, leaseMs: number, limit: number): Promise<TdbRetryDoc[]> {
    return this.queue.claim(now, leaseMs, limit);
  }

  /**
   * Records each statement's outcome of a retry's call: one bulk write; a statement since carried by another retry is
   * left alone. Writing the same outcomes again is safe (an attempt already pushed is not pushed twice), so after a
   * failure (of some of them: the others may be written) they can be written again, alone.
   */
  async recordOutcomes(
    job: TdbRetryDoc,
    attempt: TdbAttempt | undefined,
    outcomes: Array<{ id: string; outcome: TdbOutcome; error?: string }>,
  ): Promise<void> {
    const now = new Date();
    const ops: AnyBulkWriteOperation<TdbSubmissionDoc>[] = outcomes.map(({ id, outcome, error }) => ({
      updateOne: {
        // Written again after a failure, an outcome already written must not push its attempt twice (FerretDB may
        // have applied some updates of a bulk write that failed): the call's time tells.
        filter: { _id: id, batchId: job._id, ...(attempt ? { 'attempts.at': { $ne: attempt.at } } : {}) },
        update: outcomeUpdate(outcome, attempt && { ...attempt, ...(error !== undefined ? { error } : {}) }, now),
      },
    }));
    // On FerretDB a few statements to a command (see statementChunks): a call's hundred in one would stall the store.
    for (const chunk of statementChunks(await storeTraits(this.db), ops)) {
      if (chunk.length > 0) await this.submissions.bulkWrite(chunk, { ordered: false });
    }
  }

  /** Ends a retry's turn: due again with the statements still pending, or deleted. */
  async finishRetry(
    job: TdbRetryDoc,
    attempt: TdbAttempt | undefined,
    outcomes: Array<{ id: string; outcome: TdbOutcome }>,
  ): Promise<void> {
    const again = outcomes.filter((entry) => entry.outcome.state === 'pending');
    const next = again[0]?.outcome;
    if (next?.state === 'pending') {
      const index = new Map(job.submissionIds.map((id, i) => [id, i]));
      await this.queue.finish(
        job,
        { state: 'pending', dueAt: next.dueAt },
        {
          $set: {
            submissionIds: again.map((entry) => entry.id),
            payloads: again.map((entry) => job.payloads[index.get(entry.id)!]!),
          },
          ...(attempt ? { $inc: { attemptCount: 1 } } : {}),
        },
      );
      return;
    }
    await this.retries.deleteOne({ _id: job._id, leaseId: job.leaseId });
  }

  pruneLeases(before: Date): Promise<number> {
    return this.queue.pruneLeases(before);
  }

  /**
   * Statements an earlier release queued one by one (`pending` or `sending` in `tdb_submissions`) are handed to retries
   * of up to 100 each, due now. Two equality reads, which find nothing once done.
   */
  private async adoptLegacyQueue(): Promise<void> {
    const now = new Date();
    for (const state of ['pending', 'sending'] as const) {
      const docs = await this.submissions
        .find({ state }, { projection: { _id: 1, tenantId: 1, payload: 1, attemptCount: 1, batchId: 1 } })
        .toArray();
      const byTenant = new Map<string, TdbSubmissionDoc[]>();
      for (const doc of docs) {
        if (doc.batchId !== undefined) continue;
        const list = byTenant.get(doc.tenantId);
        if (list) list.push(doc);
        else byTenant.set(doc.tenantId, [doc]);
      }
      for (const [tenantId, list] of byTenant) {
        for (let from = 0; from < list.length; from += TDB_LIMITS.batch) {
          const chunk = list.slice(from, from + TDB_LIMITS.batch);
          const job = retryOf(tenantId, chunk, Math.min(...chunk.map((doc) => doc.attemptCount)), now);
          await this.queueRetry(job);
          for (const doc of chunk) {
            await this.submissions.updateOne(
              { _id: doc._id, state },
              {
                $set: { state: 'pending', batchId: job._id, dueAt: now, updatedAt: now },
                $unset: { due: '', leaseId: '', leaseUntil: '' },
              },
            );
          }
        }
      }
    }
  }
}

/** A retry of these statements (log documents, `_id` and `payload`), due at `dueAt`. */
export function retryOf(
  tenantId: string,
  docs: Array<Pick<TdbSubmissionDoc, '_id' | 'payload'>>,
  attemptCount: number,
  dueAt: Date,
): TdbRetryDoc {
  const now = new Date();
  return {
    _id: `tdbr_${randomUUID()}`,
    tenantId,
    submissionIds: docs.map((doc) => doc._id),
    payloads: docs.map((doc) => doc.payload),
    state: 'pending',
    attemptCount,
    dueAt,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The fields of a log document that the outcome sets (for a new document) or changes (for one waiting); the database's
 * answer text (its refusal, its id) as the store can hold it.
 */
export function outcomeFields(outcome: TdbOutcome, attempt: TdbAttempt | undefined, now: Date) {
  const final = outcome.state !== 'pending';
  return {
    state: outcome.state,
    ...(outcome.state === 'pending' ? { dueAt: outcome.dueAt } : {}),
    ...(outcome.state === 'submitted' ? { submittedAt: now } : {}),
    ...(outcome.state === 'submitted' && outcome.tdbUuid ? { tdbUuid: storableText(outcome.tdbUuid) } : {}),
    ...(outcome.state === 'submitted' && outcome.alreadyStored ? { alreadyStored: true } : {}),
    ...(outcome.state === 'failed' && outcome.rejection ? { rejection: storableRejection(outcome.rejection) } : {}),
    ...(outcome.state === 'skipped' ? { skipReason: outcome.reason } : {}),
    ...(attempt?.error !== undefined && outcome.state !== 'submitted' ? { lastError: attempt.error } : {}),
    ...(final ? { completedAt: now } : {}),
    updatedAt: now,
  };
}

function outcomeUpdate(outcome: TdbOutcome, attempt: TdbAttempt | undefined, now: Date) {
  return {
    $set: outcomeFields(outcome, attempt, now),
    ...(attempt !== undefined ? { $push: { attempts: attempt }, $inc: { attemptCount: 1 } } : {}),
    ...(outcome.state !== 'pending' ? { $unset: { batchId: '' as const, dueAt: '' as const } } : {}),
  };
}

/**
 * The database's refusal as the store can hold it: its messages, and the fields they name, without NUL characters
 * (PostgreSQL, under FerretDB, refuses a string with one, and so the whole log document).
 */
function storableRejection(rejection: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(rejection).map(([field, messages]) => [storableText(field), messages.map(storableText)]),
  );
}

/** A log document with the database's answer text in it as the store can hold it. */
function storableSubmission(doc: TdbSubmissionDoc): TdbSubmissionDoc {
  if (doc.rejection === undefined && doc.tdbUuid === undefined) return doc;
  return {
    ...doc,
    ...(doc.rejection !== undefined ? { rejection: storableRejection(doc.rejection) } : {}),
    ...(doc.tdbUuid !== undefined ? { tdbUuid: storableText(doc.tdbUuid) } : {}),
  };
}
