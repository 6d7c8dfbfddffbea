import { randomUUID } from 'node:crypto';
import { COLLECTIONS } from '@vigil/proto';
import { answeredInsertOutcomes, insertEach, WriteGroups, type InsertsMany } from '@vigil/proto/platform';
import { MongoBulkWriteError, MongoServerError, type Collection, type Db, type Filter } from 'mongodb';
import { BucketSweeper } from './bucket-sweeper';
import { JobBuckets } from './job-buckets';
import { JobFinishes, type FinishUpdate } from './job-finishes';
import { LeaseClaims, type LeaseDoc } from './lease-claims';
import { UnavailableError } from '../errors';
import { isRetriable } from './store-errors';
import type { DueCursorDoc, DueQueueTiming, QueuedDoc } from './queued-doc';

/** Callers' inserts sent together at most (see WriteGroups). */
const MAX_INSERT_GROUP = 64;

/**
 * A durable queue of jobs due at a time, shared by every notifier process, that finds due work without reading what is
 * not due. Each job document carries `due`, the index of the time bucket in which it next needs attention, and a poll
 * reads a bucket by equality (`find({due})`): the one index lookup FerretDB v1 pushes down to PostgreSQL (a range or
 * sort there is evaluated in Go over every document the equality matched, so `{state: 'pending', dueAt: {$lte}}` read
 * every pending job on every poll). Finding due work is the BucketSweeper's: it reads a bucket when it starts and once
 * more after it closed, and keeps the jobs read as small candidates in memory, so an idle queue reads two empty buckets
 * per bucket width, whatever it holds for later.
 *
 * The queue runs each job's life: insert (here), claim (LeaseClaims: exclusive by lease keys) and finish (JobFinishes:
 * each write proved). JobBuckets keeps a job written late where every process still reads.
 */
export class DueQueue<T extends QueuedDoc> {
  private readonly jobs: Collection<QueuedDoc>;
  /** New jobs of concurrent callers inserted together. */
  private readonly inserts: WriteGroups<T[], boolean[]>;
  /** Finds the due jobs: reads their buckets and keeps them as candidates. */
  private readonly sweeper: BucketSweeper;
  private readonly buckets: JobBuckets;
  private readonly claims: LeaseClaims<T>;
  private readonly finishes: JobFinishes<T>;

  constructor(
    jobs: Collection<T>,
    leases: Collection<LeaseDoc>,
    cursors: Collection<DueCursorDoc>,
    name: string,
    timing: DueQueueTiming,
    groupOf: (doc: QueuedDoc) => string = (doc) => doc.tenantId,
    groupField?: string,
  ) {
    // The queue touches only the fields of QueuedDoc.
    this.jobs = jobs as unknown as Collection<QueuedDoc>;
    this.inserts = new WriteGroups((lists) => this.insertGroup(lists), MAX_INSERT_GROUP);
    this.sweeper = new BucketSweeper(this.jobs, cursors, name, timing, groupOf, groupField);
    this.buckets = new JobBuckets(this.jobs, this.sweeper, name, timing);
    this.claims = new LeaseClaims(this.jobs, leases, this.buckets, this.sweeper, name, timing);
    this.finishes = new JobFinishes(this.jobs, this.buckets, this.sweeper, name, timing);
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
    await this.claims.ensureIndexes();
    if (!this.sweeper.started) await this.sweeper.start(Date.now());
  }

  bucket(at: Date | number): number {
    return this.buckets.bucket(at);
  }

  /** The scheduling fields of a job due at `dueAt` (pending). */
  pendingFields(dueAt: Date): { state: 'pending'; dueAt: Date; due: string } {
    return this.buckets.pendingFields(dueAt);
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
   *
   * Throws when a job it stored could not be moved out of a bucket other processes swept (see keepFindable): only this
   * process would find it, so the caller must not count it stored. Its retry finds the job stored and moves it again.
   */
  async insertMany(docs: T[]): Promise<Set<string>> {
    // A retry of an insert that failed a while ago computes the bucket again: the one of its first try may be swept.
    for (const doc of docs) {
      if (doc.state === 'pending' && (doc.due === undefined || this.buckets.sweptByOthers(Number(doc.due)))) {
        Object.assign(doc, this.pendingFields(doc.dueAt));
      }
    }
    const flags = docs.length === 0 ? [] : await this.inserts.write(docs);
    const inserted = docs.filter((_, index) => flags[index]);
    const moved = await this.buckets.keepFindable(inserted);
    for (const doc of inserted) this.offer(doc);
    if ('failed' in moved) throw notFindable(moved.failed);
    // A job that existed may be this caller's own earlier insert whose reply was lost, stored in a bucket computed
    // then and perhaps swept since: it is read back (a rare path: a re-consumed event, a lost reply) and followed.
    const ids = new Set(inserted.map((doc) => doc._id));
    const existing = docs.filter((doc) => !ids.has(doc._id));
    const read = await Promise.all(existing.map((job) => this.jobs.findOne({ _id: job._id })));
    const found = read.filter((doc): doc is QueuedDoc => doc !== null);
    const followed = await this.buckets.keepFindable(found);
    for (const doc of found) this.sweeper.remember(doc);
    if ('failed' in followed) throw notFindable(followed.failed);
    const now = Date.now();
    existing.forEach((doc, index) => {
      const stored = read[index];
      if (!stored || !isOwnLease(doc, stored, now)) return;
      Object.assign(doc, { leaseUntil: stored.leaseUntil, due: stored.due });
      ids.add(doc._id);
    });
    return ids;
  }

  /** See JobBuckets.written. */
  written(due: string, filter: Filter<QueuedDoc>): Promise<void> {
    return this.buckets.written(due, filter);
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

  /** Takes up to `limit` due jobs for this worker (see LeaseClaims.claim). */
  claim(...args: Parameters<LeaseClaims<T>['claim']>): Promise<T[]> {
    return this.claims.claim(...args);
  }

  /** Ends the worker's lease with the next state (see JobFinishes.finish). */
  finish(doc: T, next: { state: 'pending'; dueAt: Date } | { state: string }, update?: FinishUpdate): Promise<boolean> {
    return this.finishes.finish(doc, next, update);
  }

  /** Deletes lease documents older than `before` (their attempts are long recorded). */
  pruneLeases(before: Date): Promise<number> {
    return this.claims.pruneLeases(before);
  }
}

/**
 * A stored job that only this process would find: its insert landed, so trying it again is right whatever the move's
 * error was (the retry finds the job stored and moves it). Never a refusal of the job itself, to be set aside.
 */
function notFindable(cause: unknown): UnavailableError {
  return new UnavailableError('stored job not moved where every process reads', { cause });
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
