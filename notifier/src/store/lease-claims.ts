import type { Collection, Filter } from 'mongodb';
import type { BucketSweeper } from './bucket-sweeper';
import { insertIgnoringDuplicates } from './insert-new';
import type { JobBuckets } from './job-buckets';
import type { Candidate } from '../queue/candidates';
import type { DueQueueTiming, Pause, QueuedDoc } from './queued-doc';

/** One worker's claim on one attempt of one job, kept until pruned so that a late duplicate claim fails. */
export interface LeaseDoc {
  _id: string;
  leaseUntil: Date;
  createdAt: Date;
}

/** Claims of a job whose previous claimant died between its lease insert and its state write. */
const MAX_TAKEOVER_CHAIN = 8;

/**
 * How a queue's due jobs are taken (see DueQueue). Exclusivity comes from unique `_id` inserts into the leases
 * collection (conditional updates are not atomic on FerretDB v1): the key names the job and the time it became
 * claimable, so a stale candidate finds its key taken. A leased job is `sending` with `due` = the lease end's bucket: a
 * worker that dies mid-attempt leaves it to be swept and taken over after the lease.
 */
export class LeaseClaims<T extends QueuedDoc> {
  constructor(
    private readonly jobs: Collection<QueuedDoc>,
    private readonly leases: Collection<LeaseDoc>,
    private readonly buckets: JobBuckets,
    private readonly sweeper: BucketSweeper,
    private readonly name: string,
    private readonly timing: DueQueueTiming,
  ) {}

  async ensureIndexes(): Promise<void> {
    await this.leases.createIndex({ createdAt: 1 }, { name: 'created' });
  }

  /**
   * Takes up to `limit` due jobs for this worker, fairly between tenants and groups, within `capacity(group)` each.
   * Reads the buckets that are due for a read first. Returns the jobs as stored, now leased for `leaseMs` from when
   * the lease is written.
   *
   * `pauseOf(group)`: a group that gets no attempt for now (an endpoint whose breaker is open). Its pending jobs are
   * parked in the store (see BucketSweeper.park), a few kept as probes, and leave memory: a dead receiver's backlog is
   * neither held here nor read on every sweep. `DueQueue.unpark` brings it back once the group answers.
   */
  async claim(
    now: Date,
    leaseMs: number,
    limit: number,
    capacity?: (group: string) => number,
    pauseOf?: (group: string) => Pause | undefined,
  ): Promise<T[]> {
    // Each step counts from when it starts, and the lease from when it is written: the reads and moves before it can
    // take long over a large backlog, and a lease counted from an earlier time could be over before it is written.
    const clock = () => Math.max(now.getTime(), Date.now());
    // Jobs brought back or parked as probes are followed out of buckets others may have swept; a failed move is
    // reported and holds no claim up (the bucket is read here meanwhile; an un-park's is followed again next time).
    for (const { bucket, group } of await this.sweeper.unparkAll(clock())) {
      if (await this.follow(bucket, { [this.sweeper.groupKey]: group })) this.sweeper.unparkFollowed(bucket, group);
    }
    await this.sweeper.refresh(clock());
    if (pauseOf) {
      for (const probe of await this.sweeper.park(clock(), pauseOf)) await this.follow(probe.bucket, { _id: probe.id });
    }
    const chosen = this.sweeper.take(limit, clock(), capacity);
    if (chosen.length === 0) return [];
    const at = new Date(clock());
    const leaseUntil = new Date(at.getTime() + leaseMs);
    const keyed = chosen.map((candidate) => ({ candidate, key: leaseKey(candidate) }));
    let won: Set<string>;
    try {
      won = await insertIgnoringDuplicates(
        this.leases,
        keyed.map(({ key }) => ({ _id: key, leaseUntil, createdAt: at })),
      );
    } catch (err) {
      // Nothing is known leased: every job stays a candidate (a key this write did store is taken over once expired).
      for (const { candidate } of keyed) this.sweeper.restore(candidate);
      throw err;
    }
    const settled = await Promise.allSettled(
      keyed.map(async ({ candidate, key }): Promise<T | undefined> => {
        const leaseId = won.has(key) ? key : await this.takeOverDeadClaim(candidate, key, at, leaseUntil);
        if (!leaseId) return undefined;
        // The candidate may be stale (attempted and rescheduled since it was read): only the job as it is now counts,
        // so the lease is written only where the job is still in the attempt the candidate saw, and the job comes
        // back as it was (one round trip; exclusivity comes from the lease key above, not from this filter).
        const due = String(this.buckets.bucket(leaseUntil));
        const lease = { state: 'sending', leaseId, leaseUntil, due, updatedAt: at };
        const current = await this.jobs.findOneAndUpdate(sameAttemptFilter(candidate), {
          $set: lease,
          $unset: { parked: '' },
        });
        if (!current) return undefined;
        const interrupted = current.state === 'sending' ? { interruptedAt: current.updatedAt } : {};
        return { ...current, ...lease, ...interrupted } as unknown as T;
      }),
    );
    const result: T[] = [];
    settled.forEach((outcome, index) => {
      if (outcome.status === 'fulfilled') {
        if (outcome.value !== undefined) result.push(outcome.value);
        return;
      }
      // What was leased is returned; this one stays a candidate, and is taken over once its lease key expires.
      const { candidate } = keyed[index]!;
      this.sweeper.restore(candidate);
      this.timing.onIncident?.({ queue: this.name, kind: 'lease_failed', jobId: candidate.id, err: outcome.reason });
    });
    return result;
  }

  /** See JobBuckets.written; false when the move failed (reported). */
  private async follow(bucket: number, filter: Filter<QueuedDoc>): Promise<boolean> {
    try {
      await this.buckets.written(String(bucket), filter);
      return true;
    } catch (err) {
      this.timing.onIncident?.({ queue: this.name, kind: 'move_failed', err });
      return false;
    }
  }

  /** Deletes lease documents older than `before` (their attempts are long recorded). */
  async pruneLeases(before: Date): Promise<number> {
    return (await this.leases.deleteMany({ createdAt: { $lt: before } })).deletedCount;
  }

  /**
   * A lease key that exists: if that claim's lease ran out and the job still waits for the same attempt, its claimant
   * died between the lease insert and the state write (or lost the reply), and the next key in the chain (`key+`) is
   * claimed instead. After MAX_TAKEOVER_CHAIN such claimants the job is made due again now, which starts a new chain.
   */
  private async takeOverDeadClaim(
    candidate: Candidate,
    key: string,
    now: Date,
    leaseUntil: Date,
  ): Promise<string | undefined> {
    let current = key;
    for (let i = 0; ; i += 1) {
      const lease = await this.leases.findOne({ _id: current });
      if (!lease) return undefined;
      if (lease.leaseUntil.getTime() > now.getTime()) return undefined;
      // The last key of the chain was checked too: its claimant may be alive, mid-write.
      if (i === MAX_TAKEOVER_CHAIN) break;
      current = `${current}+`;
      const won = await insertIgnoringDuplicates(this.leases, [{ _id: current, leaseUntil, createdAt: now }]);
      if (won.has(current)) return current;
    }
    const dueAt = new Date(Math.max(now.getTime(), candidate.dueAt + 1));
    const again = { ...this.buckets.pendingFields(dueAt), updatedAt: now };
    await this.jobs.updateOne(sameAttemptFilter(candidate), { $set: again, $unset: { leaseUntil: '', leaseId: '' } });
    this.timing.onIncident?.({ queue: this.name, kind: 'takeover_reset', jobId: candidate.id });
    await this.buckets.written(again.due, { _id: candidate.id });
    return undefined;
  }
}

/** One key per attempt: a pending job's due time, or for a take-over the lease that ran out. */
function leaseKey(candidate: Candidate): string {
  return candidate.state === 'pending'
    ? `${candidate.id}@${candidate.dueAt}`
    : `${candidate.id}@${candidate.dueAt}~${candidate.leaseUntil}`;
}

/**
 * The job still in the attempt the candidate saw: same state and due time and, taken over from a lease, the same lease
 * end. The `_id` equality is what the store looks up; the other fields are checked on that one document.
 */
function sameAttemptFilter(candidate: Candidate): Filter<QueuedDoc> {
  const filter: Filter<QueuedDoc> = { _id: candidate.id, state: candidate.state, dueAt: new Date(candidate.dueAt) };
  if (candidate.state === 'sending') {
    filter.leaseUntil = candidate.leaseUntil === undefined ? { $exists: false } : new Date(candidate.leaseUntil);
  }
  return filter;
}
