// The notifier's own Transparency Database documents: the retries it queues, and the id of a submission.
import type { TdbStatement } from '@vigil/proto';

/**
 * Collection `tdb_retries`, the notifier's: a call to make again, with the statements (up to 100, one tenant's) that a
 * failed call carried, or that waited while the tenant's database was failing. A job of the notifier's DueQueue;
 * deleted once every statement in it has its outcome.
 */
export interface TdbRetryDoc {
  _id: string;
  tenantId: string;
  /** The statements' `tdb_submissions` ids, in the order of `payloads`. */
  submissionIds: string[];
  payloads: TdbStatement[];
  state: 'pending' | 'sending';
  /** Calls already made for these statements. */
  attemptCount: number;
  dueAt: Date;
  due?: string;
  leaseUntil?: Date;
  leaseId?: string;
  createdAt: Date;
  updatedAt: Date;
}

export const tdbSubmissionIdOf = (eventId: string): string => `tdb_${eventId}`;
