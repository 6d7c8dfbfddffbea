/** The shapes a due queue's jobs, sweep cursor and timing share (DueQueue, BucketSweeper). */
import type { BackoffPolicy } from '@vigil/proto/platform';

/** The fields every queued job document has (webhook deliveries, user emails, payment actions). */
export interface QueuedDoc {
  _id: string;
  tenantId: string;
  /** `pending` (waiting for `dueAt`) and `sending` (leased) belong to the queue; every other state is final. */
  state: string;
  attemptCount: number;
  dueAt: Date;
  /**
   * The time bucket in which the job next needs looking at: `dueAt`'s for `pending`, the lease end's for `sending`,
   * absent once final. Polls select by equality on it (see DueQueue).
   */
  due?: string;
  leaseUntil?: Date;
  leaseId?: string;
  updatedAt: Date;
  /**
   * Set while the job waits, moved to a later bucket, for its group to answer again (see BucketSweeper.park); cleared
   * when it is claimed or brought back.
   */
  parked?: true;
  /**
   * Set on a job `claim` returns when it took the job over from a worker whose lease ran out (it stopped mid-attempt):
   * when that worker had leased it. Never stored.
   */
  interruptedAt?: Date;
}

/**
 * A group (an endpoint) that gets no attempt until `until`, then one at a time (a probe) until one succeeds. Its
 * backlog is parked until `backlogUntil`, far later, with jobs kept as probes before that, `probeEveryMs` apart at most.
 */
export interface Pause {
  until: number;
  backlogUntil: number;
  probeEveryMs: number;
}

/** Where the queue's sweep of closed buckets has reached, kept so a restart resumes there. */
export interface DueCursorDoc {
  _id: string;
  /** Every bucket before this one was found empty after it closed. */
  bucket: number;
  updatedAt: Date;
}

export interface DueQueueTiming {
  /** Width of a time bucket, milliseconds. */
  bucketMs: number;
  /**
   * How long after a bucket's end a job may still be written into it (a write computed just before its bucket ended,
   * clock skew between processes), milliseconds; the bucket is swept once more after that.
   */
  graceMs: number;
  /** A closed bucket that still held jobs is read again after this long, milliseconds. Default 5 s. */
  resweepMs?: number;
  /** Candidates kept in memory at most, in all and per group (an endpoint, a tenant). Defaults 100,000 and 1,000. */
  maxCandidates?: number;
  maxPerGroup?: number;
  /**
   * Tries of a finish's write in all, and the delays between them: by default, until the lease ends, 100 ms doubling up
   * to 2 s apart (5 tries for a job without a lease).
   */
  finishTries?: { attempts: number; backoff: BackoffPolicy };
  /** Told of each job the queue could not move on as planned (see QueueIncident): the owner logs and counts it. */
  onIncident?: (incident: QueueIncident) => void;
}

/**
 * What the queue tells its owner about a job it could not move on as planned. None loses the job: each says how it is
 * found again.
 * - `lease_failed`: a claim's lease write failed; the job stays a candidate (taken over once the lease key expires).
 * - `takeover_reset`: MAX_TAKEOVER_CHAIN claimants in a row died between their lease key and their state write (or lost
 *   the reply); the job is made due again now under a new key.
 * - `park_failed`: moving a paused group's jobs to a later bucket failed; they stay where they are and are read again.
 * - `unpark_failed`: bringing a group's parked jobs back when it answered failed; it is tried again at the next claim,
 *   and the jobs are found in their later bucket meanwhile.
 * - `finish_retried`: a finish's write failed or lost its reply, and a retry was answered, so the write cannot land
 *   later. A retry that matched nothing (the first write may have landed in a bucket others swept) reads the job back
 *   and keeps it findable.
 * - `finish_failed`: a finish's write failed or lost its reply on every try (its caller gets the error too); the job as
 *   it would be written stays a candidate here, its bucket swept until found empty, and the lease's bucket finds it if
 *   it never ran.
 * - `readback_failed`: reading back the job after a failed finish failed too; it is followed as `finish_failed` says
 *   (the finish throws the write's error, as its outcome is unknown).
 * - `move_failed`: moving a job out of a bucket other processes may have swept for the last time failed (after an
 *   insert, a finish, a probe or an un-park); it stays a candidate here, its bucket swept by this process until found
 *   empty. An insert's caller gets the error too, and tries again.
 */
export interface QueueIncident {
  queue: string;
  kind:
    | 'lease_failed'
    | 'takeover_reset'
    | 'park_failed'
    | 'unpark_failed'
    | 'finish_retried'
    | 'finish_failed'
    | 'readback_failed'
    | 'move_failed';
  jobId?: string;
  err?: unknown;
}
