import { randomUUID } from 'node:crypto';
import { COLLECTIONS } from '@vigil/proto';
import { answeredInsertOutcomes, insertEach, retry, WriteGroups, type InsertsMany } from '@vigil/proto/platform';
import { MongoBulkWriteError, MongoServerError, type Collection, type Db, type Filter } from 'mongodb';
import { BucketSweeper } from './bucket-sweeper';
import { insertIgnoringDuplicates } from './insert-new';
import { isRetriable } from './store-errors';
import type { Candidate } from '../queue/candidates';
import type { DueCursorDoc, DueQueueTiming, Pause, QueuedDoc } from './queued-doc';

/** One worker's claim on one attempt of one job, kept until pruned so that a late duplicate claim fails. */
export interface LeaseDoc {
  _id: string;
  leaseUntil: Date;
  createdAt: Date;
}

/** Claims of a job whose previous claimant died between its lease insert and its state write. */
const MAX_TAKEOVER_CHAIN = 8;
/** Callers' inserts sent together at most (see WriteGroups). */
const MAX_INSERT_GROUP = 64;
/** Tries of a finish's write: about 1.5 s at most, as the worker's slot stays taken meanwhile. */
const FINISH_TRIES = { attempts: 5, backoff: { initialMs: 100, maxMs: 2_000 } };

/**
 * A durable queue of jobs due at a time, shared by every notifier process, that finds due work without reading what is
 * not due. Each job document carries `due`, the index of the time bucket in which it next needs attention, and a poll
 * reads a bucket by equality (`find({due})`): the one index lookup FerretDB v1 pushes down to PostgreSQL (a range or
 * sort there is evaluated in Go over every document the equality matched, so `{state: 'pending', dueAt: {$lte}}` read
 * every pending job on every poll). Finding due work is the BucketSweeper's: it reads a bucket when it starts and once
 * more after it closed, and keeps the jobs read as small candidates in memory, so an idle queue reads two empty buckets
 * per bucket width, whatever it holds for later. The queue runs each job's life: insert, claim, finish.
 *
 * Exclusivity comes from unique `_id` inserts into the leases collection (conditional updates are not atomic on
 * FerretDB v1): the key names the job and the time it became claimable, so a stale candidate finds its key taken. A
 * leased job is `sending` with `due` = the lease end's bucket: a worker that dies mid-attempt leaves it to be swept and
 * taken over after the lease.
 */
export class DueQueue<T extends QueuedDoc> {
  private readonly jobs: Collection<QueuedDoc>;
  /** New jobs of concurrent callers inserted together. */
  private readonly inserts: WriteGroups<T[], boolean[]>;
  /** Finds the due jobs: reads their buckets and keeps them as candidates. */
  private readonly sweeper: BucketSweeper;

  constructor(
    jobs: Collection<T>,
    private readonly leases: Collection<LeaseDoc>,
    cursors: Collection<DueCursorDoc>,
    private readonly name: string,
    private readonly timing: DueQueueTiming,
    groupOf: (doc: QueuedDoc) => string = (doc) => doc.tenantId,
    groupField?: string,
  ) {
    // The queue touches only the fields of QueuedDoc.
    this.jobs = jobs as unknown as Collection<QueuedDoc>;
    this.inserts = new WriteGroups((lists) => this.insertGroup(lists), MAX_INSERT_GROUP);
    this.sweeper = new BucketSweeper(this.jobs, cursors, name, timing, groupOf, groupField);
  }

  /** Bucket reads made, for tests and metrics. */
  get reads(): number {
    return this.sweeper.reads;
  }

  /**
   * The queue of the jobs in `jobs`, named after that collection: its lease keys in the collection named `leases`, its
   * sweep cursor in the shared `due_cursors`. Jobs are handed out fairly between tenants, or between the groups
   * `group` names (its `field` holds the group in each job).
   */
  static in<T extends QueuedDoc>(
    db: Db,
    jobs: Collection<T>,
    leases: string,
    timing: DueQueueTiming,
    group?: { of: (doc: QueuedDoc) => string; field: string },
  ): DueQueue<T> {
    const cursors = db.collection<DueCursorDoc>(COLLECTIONS.dueCursors);
    return new DueQueue(jobs, db.collection(leases), cursors, jobs.collectionName, timing, group?.of, group?.field);
  }

  /**
   * Creates the indexes and, on a database written by a release without time buckets, gives every unfinished job its
   * bucket (see BucketSweeper.start). That release's `{state, dueAt}` index, which every write paid for, is dropped.
   */
  async ensureIndexes(): Promise<void> {
    // A collection that does not exist yet has no index to list (error 26, NamespaceNotFound).
    const existing: { name?: string; key?: Record<string, unknown> }[] = await this.jobs
      .listIndexes()
      .toArray()
      .catch((err: unknown) => {
        if (err instanceof MongoServerError && err.code === 26) return [];
        throw err;
      });
    const legacy = existing.find((index) => index.name === 'due' && index.key?.state !== undefined);
    if (legacy) await this.jobs.dropIndex('due');
    await this.jobs.createIndex({ due: 1 }, { name: 'due_bucket', sparse: true });
    await this.leases.createIndex({ createdAt: 1 }, { name: 'created' });
    if (!this.sweeper.started) await this.sweeper.start(Date.now());
  }

  bucket(at: Date | number): number {
    return this.sweeper.bucket(at);
  }

  /** The scheduling fields of a job due at `dueAt` (pending). */
  pendingFields(dueAt: Date): { state: 'pending'; dueAt: Date; due: string } {
    // A due time in the past goes in the current bucket: the sweep may have passed older ones already.
    return { state: 'pending', dueAt, due: String(this.bucket(Math.max(dueAt.getTime(), Date.now()))) };
  }

  /** The lease fields of a job this worker holds until `leaseUntil` (sending). */
  leaseFields(leaseUntil: Date): { state: 'sending'; leaseId: string; leaseUntil: Date; due: string } {
    return { state: 'sending', leaseId: randomUUID(), leaseUntil, due: String(this.bucket(leaseUntil)) };
  }

  /** Due candidates in memory (the backlog this process knows of), without reading the store. */
  dueCount(now: number): number {
    return this.sweeper.dueCount(now);
  }

  /** Inserts the job unless it exists (a re-consumed event); true if this call inserted it. */
  async insertNew(doc: T): Promise<boolean> {
    return (await this.insertMany([doc])).has(doc._id);
  }

  /**
   * Inserts the jobs that do not exist yet (one unordered insertMany, with those of concurrent callers: a group
   * commit); returns the ids this call inserted. A pending job without a bucket gets the one of its due time, and is
   * offered to this process.
   *
   * A leased job found stored under the lease id it was given, that lease still running, is this caller's own earlier
   * insert whose reply was lost: it counts as inserted, so the caller works it under that lease now rather than leave
   * it to be taken over, as interrupted, once the lease ran out. Its lease end and bucket are set as stored.
   */
  async insertMany(docs: T[]): Promise<Set<string>> {
    for (const doc of docs)
      if (doc.state === 'pending' && doc.due === undefined) Object.assign(doc, this.pendingFields(doc.dueAt));
    const flags = docs.length === 0 ? [] : await this.inserts.write(docs);
    const inserted = docs.filter((_, index) => flags[index]);
    await this.keepFindable(inserted);
    for (const doc of inserted) this.offer(doc);
    // A job that existed may be this caller's own earlier insert whose reply was lost, stored in a bucket computed
    // then and perhaps swept since: it is read back (a rare path: a re-consumed event, a lost reply) and followed.
    const ids = new Set(inserted.map((doc) => doc._id));
    const existing = docs.filter((doc) => !ids.has(doc._id));
    const read = await Promise.all(existing.map((job) => this.jobs.findOne({ _id: job._id })));
    const found = read.filter((doc): doc is QueuedDoc => doc !== null);
    await this.keepFindable(found);
    for (const doc of found) this.sweeper.remember(doc);
    const now = Date.now();
    existing.forEach((doc, index) => {
      const stored = read[index];
      if (!stored || !isOwnLease(doc, stored, now)) return;
      Object.assign(doc, { leaseUntil: stored.leaseUntil, due: stored.due });
      ids.add(doc._id);
    });
    return ids;
  }

  /**
   * A write outside the queue (a manual retry, a replay, another process's insert) put the jobs `filter` names in bucket
   * `due` (from `pendingFields`): this process reads it again at its next claim, and they are kept findable by every
   * process (see keepFindable).
   */
  async written(due: string, filter: Filter<QueuedDoc>): Promise<void> {
    this.sweeper.readAgain(Number(due));
    await this.moveIfSwept(Number(due), filter);
  }

  /**
   * Pending jobs written by this process whose write was answered only once other processes may have swept their
   * bucket for the last time (a write that waited on a slow store past the bucket's end and the grace) go to the
   * current bucket, which every process still reads. Otherwise only this process would know of them, and one that
   * stops before it works them would leave them where no process reads again. The documents given follow the move.
   *
   * A move that fails (it may have run or not) is reported and never thrown: the jobs stay candidates here, and their
   * bucket is swept by this process until a read finds it empty. The write before it stands, so its caller goes on.
   */
  private async keepFindable(docs: QueuedDoc[]): Promise<void> {
    const late = docs.filter(
      (doc): doc is QueuedDoc & { due: string } =>
        doc.state === 'pending' && doc.due !== undefined && this.sweptByOthers(Number(doc.due)),
    );
    for (const due of new Set(late.map((doc) => doc.due))) {
      const list = late.filter((doc) => doc.due === due);
      try {
        const to = await this.moveIfSwept(Number(due), { _id: { $in: list.map((doc) => doc._id) } });
        for (const doc of list) doc.due = String(to);
      } catch (err) {
        for (const doc of list) {
          this.sweeper.remember(doc);
          this.timing.onIncident?.({ queue: this.name, kind: 'move_failed', jobId: doc._id, err });
        }
      }
    }
  }

  /** Moves the pending jobs `filter` names out of `bucket` while it is one others may have swept; the bucket they end in. */
  private async moveIfSwept(bucket: number, filter: Filter<QueuedDoc>): Promise<number> {
    let from = bucket;
    while (this.sweptByOthers(from)) {
      const to = this.bucket(Date.now());
      await this.jobs.updateMany({ ...filter, due: String(from), state: 'pending' }, { $set: { due: String(to) } });
      this.sweeper.readAgain(to);
      from = to;
    }
    return from;
  }

  /** Whether other processes may have read the bucket for the last time: its end and the grace are past. */
  private sweptByOthers(bucket: number): boolean {
    return Date.now() >= (bucket + 1) * this.timing.bucketMs + this.timing.graceMs;
  }

  /**
   * One group's inserts (see WriteGroups): every caller's jobs in one unordered insert, answered per caller. An insert
   * the store refused for a reason of its own (a document it cannot hold), not for being out of reach, fails only the
   * caller of the refused document. When the server answered for every document, each caller gets what became of its
   * own; otherwise each caller's jobs are inserted again on their own. A job the group's insert stored then comes back
   * as existing, and its caller reads it back as it does after a lost reply.
   */
  private async insertGroup(lists: readonly T[][]): Promise<Array<boolean[] | Error>> {
    const jobs = this.jobs as unknown as InsertsMany<T>;
    const all = lists.flat();
    let flags: Array<boolean | Error>;
    try {
      flags = await insertEach(jobs, all);
    } catch (err) {
      if (lists.length < 2 || !(err instanceof MongoBulkWriteError) || isRetriable(err)) throw err;
      const answered = answeredInsertOutcomes(err, all.length);
      if (!answered) {
        return Promise.all(
          lists.map((docs) => insertEach(jobs, docs).catch((own: unknown) => (own instanceof Error ? own : err))),
        );
      }
      flags = answered.map((outcome) => (outcome === 'refused' ? err : outcome === 'inserted'));
    }
    let end = 0;
    return lists.map((docs) => {
      const own = flags.slice(end, (end += docs.length));
      return own.find((flag): flag is Error => flag instanceof Error) ?? (own as boolean[]);
    });
  }

  /** Brings the group's parked jobs back at the next claim: it answered (see BucketSweeper.park). */
  unpark(group: string): void {
    this.sweeper.unpark(group);
  }

  /** Tells the queue of a pending job this process just wrote, so that it need not be read back to be found. */
  offer(doc: QueuedDoc): void {
    this.sweeper.offer(doc);
  }

  /**
   * Takes up to `limit` due jobs for this worker, fairly between tenants and groups, within `capacity(group)` each.
   * Reads the buckets that are due for a read first. Returns the jobs as stored, now leased until `now + leaseMs`.
   *
   * `pauseOf(group)`: a group that gets no attempt for now (an endpoint whose breaker is open). Its pending jobs are
   * parked in the store (see BucketSweeper.park), a few kept as probes, and leave memory: a dead receiver's backlog is
   * neither held here nor read on every sweep. `unpark` brings it back once the group answers.
   */
  async claim(
    now: Date,
    leaseMs: number,
    limit: number,
    capacity?: (group: string) => number,
    pauseOf?: (group: string) => Pause | undefined,
  ): Promise<T[]> {
    await this.sweeper.unparkAll(now.getTime());
    await this.sweeper.refresh(now.getTime());
    if (pauseOf) await this.sweeper.park(now.getTime(), pauseOf);
    const chosen = this.sweeper.take(limit, now.getTime(), capacity);
    if (chosen.length === 0) return [];
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const keyed = chosen.map((candidate) => ({ candidate, key: leaseKey(candidate) }));
    let won: Set<string>;
    try {
      won = await insertIgnoringDuplicates(
        this.leases,
        keyed.map(({ key }) => ({ _id: key, leaseUntil, createdAt: now })),
      );
    } catch (err) {
      // Nothing is known leased: every job stays a candidate (a key this write did store is taken over once expired).
      for (const { candidate } of keyed) this.sweeper.restore(candidate);
      throw err;
    }
    const settled = await Promise.allSettled(
      keyed.map(async ({ candidate, key }): Promise<T | undefined> => {
        const leaseId = won.has(key) ? key : await this.takeOverDeadClaim(candidate, key, now, leaseUntil);
        if (!leaseId) return undefined;
        // The candidate may be stale (attempted and rescheduled since it was read): only the job as it is now counts,
        // so the lease is written only where the job is still in the attempt the candidate saw, and the job comes
        // back as it was (one round trip; exclusivity comes from the lease key above, not from this filter).
        const lease = { state: 'sending', leaseId, leaseUntil, due: String(this.bucket(leaseUntil)), updatedAt: now };
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

  /**
   * Ends the worker's lease with the next state: `pending` again at `dueAt`, or a final state. `update` adds the job's
   * own fields; a worker whose lease was taken over writes nothing (the filter names its lease). True when the write
   * matched the job under that lease, false when it wrote nothing.
   *
   * A write that failed is tried again while the store is out of reach, within `finishTries` and the lease. Otherwise
   * it could land later, after every process swept the job's new bucket for the last time, and strand the job there.
   * A retry that is answered settles it: the filter names the lease and the update unsets it, so once one copy ran,
   * no other can match again.
   */
  async finish(
    doc: T,
    next: { state: 'pending'; dueAt: Date } | { state: string },
    update: {
      $set?: Record<string, unknown>;
      $unset?: Record<string, ''>;
      $push?: Record<string, unknown>;
      $inc?: Record<string, number>;
    } = {},
  ): Promise<boolean> {
    const now = new Date();
    const pending = 'dueAt' in next && next.state === 'pending';
    const scheduling = pending ? this.pendingFields(next.dueAt) : { state: next.state };
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
    const { attempts, backoff } = this.timing.finishTries ?? FINISH_TRIES;
    const leaseEnd = doc.leaseUntil?.getTime() ?? Infinity;
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
      await this.keepFindable([rescheduled]);
      this.offer(rescheduled);
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
    await this.keepFindable([current]);
    this.sweeper.remember(current);
    return current;
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
    for (let i = 0; i < MAX_TAKEOVER_CHAIN; i += 1) {
      const lease = await this.leases.findOne({ _id: current });
      if (!lease) return undefined;
      if (lease.leaseUntil.getTime() > now.getTime()) return undefined;
      current = `${current}+`;
      const won = await insertIgnoringDuplicates(this.leases, [{ _id: current, leaseUntil, createdAt: now }]);
      if (won.has(current)) return current;
    }
    const dueAt = new Date(Math.max(now.getTime(), candidate.dueAt + 1));
    const again = { ...this.pendingFields(dueAt), updatedAt: now };
    await this.jobs.updateOne(sameAttemptFilter(candidate), { $set: again, $unset: { leaseUntil: '', leaseId: '' } });
    this.timing.onIncident?.({ queue: this.name, kind: 'takeover_reset', jobId: candidate.id });
    await this.written(again.due, { _id: candidate.id });
    return undefined;
  }
}

/**
 * The update that records an attempt on a job that keeps its attempts (`attempts`, `attemptCount`), for `finish`; none
 * without an attempt (an outcome decided without a call).
 */
export function attemptRecorded<A>(attempt: A | undefined): { $push?: { attempts: A }; $inc?: { attemptCount: 1 } } {
  return attempt === undefined ? {} : { $push: { attempts: attempt }, $inc: { attemptCount: 1 } };
}

/** Whether the stored job is leased, still, under the lease id the caller gave it. */
function isOwnLease(given: QueuedDoc, stored: QueuedDoc, now: number): boolean {
  return (
    given.leaseId !== undefined &&
    stored.state === 'sending' &&
    stored.leaseId === given.leaseId &&
    stored.leaseUntil !== undefined &&
    stored.leaseUntil.getTime() > now
  );
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
