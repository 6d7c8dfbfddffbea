import { retry } from '@vigil/proto/platform';
import type { Collection } from 'mongodb';
import type { BucketSweeper } from './bucket-sweeper';
import type { JobBuckets } from './job-buckets';
import { isRetriable } from './store-errors';
import type { DueQueueTiming, QueuedDoc } from './queued-doc';

/**
 * Tries of a finish's write: until the lease ends (its margin is for the store's writes), or about 1.5 s for a job
 * without one. Given up sooner, a job whose outcome (a sent email) the store could not take for a few seconds would be
 * taken over at the lease's end and done again.
 */
const FINISH_TRIES = { attempts: Infinity, backoff: { initialMs: 100, maxMs: 2_000 } };
const FINISH_TRIES_UNLEASED = 5;

/** What a finish writes besides the scheduling fields: the job's own fields. */
export interface FinishUpdate {
  $set?: Record<string, unknown>;
  $unset?: Record<string, ''>;
  $push?: Record<string, unknown>;
  $inc?: Record<string, number>;
}

/**
 * How a worker's lease on a job ends (see DueQueue), with the proof of what the write did: a write that failed or lost
 * its reply is tried again, read back, and the job kept findable, never counted as done on a guess.
 */
export class JobFinishes<T extends QueuedDoc> {
  constructor(
    private readonly jobs: Collection<QueuedDoc>,
    private readonly buckets: JobBuckets,
    private readonly sweeper: BucketSweeper,
    private readonly name: string,
    private readonly timing: DueQueueTiming,
  ) {}

  /**
   * Ends the worker's lease with the next state: `pending` again at `dueAt`, or a final state. `update` adds the job's
   * own fields; a worker whose lease was taken over writes nothing (the filter names its lease). True when the write
   * matched the job under that lease, false when it wrote nothing.
   *
   * A write that failed is tried again while the store is out of reach, within the lease (and `finishTries`). Otherwise
   * it could land later, after every process swept the job's new bucket for the last time, and strand the job there.
   * A retry that is answered settles it: the filter names the lease and the update unsets it, so once one copy ran,
   * no other can match again.
   */
  async finish(
    doc: T,
    next: { state: 'pending'; dueAt: Date } | { state: string },
    update: FinishUpdate = {},
  ): Promise<boolean> {
    const now = new Date();
    const pending = 'dueAt' in next && next.state === 'pending';
    const scheduling = pending ? this.buckets.pendingFields(next.dueAt) : { state: next.state };
    const rescheduled = pending ? { ...doc, ...scheduling } : undefined;
    const unset: Record<string, ''> = {
      ...update.$unset,
      leaseUntil: '',
      leaseId: '',
      ...(pending ? {} : { due: '' }),
    };
    for (const key of Object.keys(update.$set ?? {})) delete unset[key];
    // A retry cannot count or log the attempt twice. A copy that runs after another ran matches nothing (the lease is
    // gone). On FerretDB v1 an update reads the document, checks the filter, then writes back by `_id` the document it
    // computed: two copies that both read the leased job compute the same document (one update, one `now`), so the
    // second write stores it again rather than adding to it.
    const write = {
      ...(update.$push ? { $push: update.$push } : {}),
      ...(update.$inc ? { $inc: update.$inc } : {}),
      $set: { ...update.$set, ...scheduling, updatedAt: now },
      $unset: unset,
    };
    const leaseEnd = doc.leaseUntil?.getTime() ?? Infinity;
    const { backoff, attempts: tries } = this.timing.finishTries ?? FINISH_TRIES;
    const attempts = leaseEnd === Infinity ? Math.min(tries, FINISH_TRIES_UNLEASED) : tries;
    let failed: unknown;
    let matched: boolean;
    try {
      matched = await retry(
        async () => (await this.jobs.updateOne({ _id: doc._id, leaseId: doc.leaseId }, write)).matchedCount === 1,
        {
          backoff,
          maxAttempts: attempts,
          // Past the lease, the job is another worker's to take over: this one stops holding its slot.
          retriable: (err) => isRetriable(err) && Date.now() < leaseEnd,
          onRetry: (err) => {
            failed ??= err;
          },
        },
      );
    } catch (err) {
      this.timing.onIncident?.({ queue: this.name, kind: 'finish_failed', jobId: doc._id, err });
      await this.followUnconfirmed(doc, rescheduled);
      throw err;
    }
    if (failed !== undefined) {
      this.timing.onIncident?.({ queue: this.name, kind: 'finish_retried', jobId: doc._id, err: failed });
    }
    if (!matched && failed !== undefined) return this.followRetried(doc, rescheduled, now, failed);
    if (!matched) return false;
    if (rescheduled) {
      await this.buckets.keepFindable([rescheduled]);
      this.sweeper.offer(rescheduled);
    }
    return true;
  }

  /**
   * A finish whose retry matched nothing after a failed write: that write landed (its reply lost), perhaps in a bucket
   * every process swept since, or the lease was taken over. The job is read back once and kept findable as it is. True
   * when it still holds this finish's write (its `updatedAt`); false when it does not, as after a take-over (or when
   * another write followed this one, which cannot be told apart). A failed read-back throws `failed`.
   */
  private async followRetried(
    doc: T,
    rescheduled: QueuedDoc | undefined,
    now: Date,
    failed: unknown,
  ): Promise<boolean> {
    const current = await this.followUnconfirmed(doc, rescheduled);
    if (current === undefined) throw failed;
    return current !== null && current.leaseId === undefined && current.updatedAt.getTime() === now.getTime();
  }

  /**
   * A finish whose write failed may have run (its reply lost) or may still run, into a bucket every process may have
   * swept by then. The job as it would be written (`rescheduled`, when pending) is kept a candidate, its bucket swept
   * by this process until a read finds it empty; then the job is read back and followed as it is. One still under
   * this worker's lease keeps the rescheduled candidate: should the write never run, the lease's bucket finds the job.
   * Returns the job as read back (null when it is gone), undefined when the read failed.
   */
  private async followUnconfirmed(doc: T, rescheduled: QueuedDoc | undefined): Promise<QueuedDoc | null | undefined> {
    if (rescheduled) this.sweeper.remember(rescheduled);
    let current: QueuedDoc | null;
    try {
      current = await this.jobs.findOne({ _id: doc._id });
    } catch (err) {
      this.timing.onIncident?.({ queue: this.name, kind: 'readback_failed', jobId: doc._id, err });
      return undefined;
    }
    if (!current) return null;
    if (rescheduled && current.state === 'sending' && current.leaseId === doc.leaseId) return current;
    await this.buckets.keepFindable([current]);
    this.sweeper.remember(current);
    return current;
  }
}

/**
 * The update that records an attempt on a job that keeps its attempts (`attempts`, `attemptCount`), for `finish`; none
 * without an attempt (an outcome decided without a call).
 */
export function attemptRecorded<A>(attempt: A | undefined): { $push?: { attempts: A }; $inc?: { attemptCount: 1 } } {
  return attempt === undefined ? {} : { $push: { attempts: attempt }, $inc: { attemptCount: 1 } };
}
