import {
  COLLECTIONS,
  RETROACTION_LIMITS,
  TERMINAL_RETROACTION_STATUSES,
  type RetroactionFailure,
  type RetroactionJobDoc,
  type RetroactionRunDoc,
  type RetroactionStatus,
} from '@vigil/proto';
import type { Db } from 'mongodb';
import { BatchJobStore, type BatchJobKind, type BatchJobState, type BatchJobStoreOptions } from './batch-job-store';

/** A job with its run, as the API shows it. */
export type RetroactionState = BatchJobState<
  RetroactionJobDoc,
  RetroactionRunDoc,
  RetroactionStatus,
  RetroactionFailure
>;

/** Retroactions: one running at a time per tenant (its slot's `_id` is the tenant), kept until deleted. */
const RETROACTION_KIND: BatchJobKind<RetroactionJobDoc, RetroactionRunDoc, RetroactionStatus, RetroactionFailure> = {
  collections: {
    jobs: COLLECTIONS.retroactions,
    slots: COLLECTIONS.retroactionSlots,
    runs: COLLECTIONS.retroactionRuns,
  },
  terminal: TERMINAL_RETROACTION_STATUSES,
  slot: { id: (tenantId) => tenantId, withTenant: false },
  listed: RETROACTION_LIMITS.listed,
  expires: false,
  /**
   * Queued until a runner starts it; a queued job cancelled is cancelled at once (its runner will only record it). A
   * running job whose runner died stays running until the next runner resumes it (its progress is stored).
   */
  statusOf(job, run) {
    if (!run) return { status: job.cancelRequestedAt ? 'cancelled' : 'queued' };
    return { status: run.status, ...(run.error ? { error: run.error } : {}) };
  },
};

/** Retroaction jobs (the gateway writes them, a moderator reads them) and each tenant's one running slot. */
export class RetroactionStore extends BatchJobStore<
  RetroactionJobDoc,
  RetroactionRunDoc,
  RetroactionStatus,
  RetroactionFailure
> {
  constructor(db: Db, options?: BatchJobStoreOptions) {
    super(db, RETROACTION_KIND, options);
  }
}
