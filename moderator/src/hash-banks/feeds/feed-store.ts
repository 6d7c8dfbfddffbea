import { COLLECTIONS, type FeedFailure, type FeedRunState, type FeedSource } from '@vigil/proto';
import { insertEach, insertUnlessExists } from '@vigil/proto/platform';
import type { Collection, Db } from 'mongodb';
import { claimInChain } from '../../store/claim-chain';
import { guarded } from '../../store/mongo-errors';

/** The result of a feed's last run, as the API shows it. */
export interface FeedRunDoc {
  state: FeedRunState;
  at: Date;
  added: number;
  withdrawn: number;
  duplicates: number;
  failure?: FeedFailure;
  /** A short, bounded description of the failure (never a credential, never the file's content). */
  message?: string;
}

export interface FeedDoc {
  _id: string;
  tenantId: string;
  bankId: string;
  source: FeedSource;
  url: string;
  intervalS: number;
  enabled: boolean;
  /** The credentials, sealed (SecretBox, context `hash-feed:<tenantId>:<feedId>`); never returned by the API. */
  credentials?: string;
  /** A file feed's validators from its last fetch: sent back so an unchanged file is answered 304. */
  etag?: string;
  lastModified?: string;
  /** An exchange's checkpoint: where the next run reads from (StopNCII's `nextSetTimestamp`, NCMEC's `to`). */
  checkpoint?: string;
  /** When the next run is due. */
  dueAt: Date;
  /** `dueAt`'s time bucket while enabled (absent when disabled): polls select by equality on it. */
  due?: number;
  /** Failed runs in a row (the backoff grows with it); 0 after a run that worked. */
  failures: number;
  lastRun?: FeedRunDoc;
  createdAt: Date;
  updatedAt: Date;
}

/** A claim on one run of a feed (or one attempt of a feedback job): `_id` names it and the due time it claims. */
interface ClaimDoc {
  _id: string;
  /** The feed or feedback job it claims. */
  of: string;
  at: Date;
}

/** A hash that a feed brought into its bank. */
interface ItemDoc {
  _id: string;
  feedId: string;
  hashId: string;
}

/** Feedback owed to an exchange on one hash of one feed (StopNCII `Blocked`), sent by the feed runner. */
export interface FeedbackDoc {
  _id: string;
  tenantId: string;
  feedId: string;
  hashId: string;
  value: 'Blocked';
  state: 'pending' | 'sent' | 'failed';
  attempts: number;
  dueAt: Date;
  /** `dueAt`'s bucket while pending. */
  due?: number;
  lastError?: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Width of the time buckets that polls read by equality, milliseconds. */
const FEED_BUCKET_MS = 60_000;
export const bucketOf = (at: Date): number => Math.floor(at.getTime() / FEED_BUCKET_MS);

/** Claims older than this are deleted by the runner's sweep (a late duplicate claim needs none older). */
const CLAIM_KEEP_MS = 24 * 3600_000;

/**
 * The feeds of the hash banks and their bookkeeping, owned by the moderator. Polls select by equality on `due` (the
 * index FerretDB pushes down), so an idle schedule reads two small buckets a poll; the feeds themselves are
 * configuration (at most a few per bank), read whole only by the periodic sweep. Exclusivity of a run comes from a
 * unique claim insert keyed by the feed and the due time it claims (conditional updates are not atomic on FerretDB v1);
 * a claim its replica never recorded is taken over after the lease.
 */
export class FeedStore {
  private readonly feeds: Collection<FeedDoc>;
  private readonly claims: Collection<ClaimDoc>;
  private readonly items: Collection<ItemDoc>;
  private readonly feedback: Collection<FeedbackDoc>;

  constructor(db: Db) {
    this.feeds = db.collection(COLLECTIONS.hashFeeds);
    this.claims = db.collection(COLLECTIONS.hashFeedClaims);
    this.items = db.collection(COLLECTIONS.hashFeedItems);
    this.feedback = db.collection(COLLECTIONS.hashFeedFeedback);
  }

  async ensureIndexes(): Promise<void> {
    await guarded(() => this.feeds.createIndex({ bankId: 1 }, { name: 'bank' }));
    await guarded(() => this.feeds.createIndex({ due: 1 }, { name: 'due' }));
    await guarded(() => this.feeds.createIndex({ enabled: 1 }, { name: 'enabled' }));
    await guarded(() => this.claims.createIndex({ of: 1 }, { name: 'of' }));
    await guarded(() => this.items.createIndex({ feedId: 1 }, { name: 'feed' }));
    await guarded(() => this.feedback.createIndex({ due: 1 }, { name: 'due' }));
    await guarded(() => this.feedback.createIndex({ state: 1 }, { name: 'state' }));
  }

  // Feeds

  insert(feed: FeedDoc): Promise<unknown> {
    return guarded(() => this.feeds.insertOne(feed));
  }

  get(feedId: string): Promise<FeedDoc | null> {
    return guarded(() => this.feeds.findOne({ _id: feedId }));
  }

  ofBank(bankId: string): Promise<FeedDoc[]> {
    return guarded(() => this.feeds.find({ bankId }).toArray()).then((feeds) =>
      feeds.sort((a, b) => (a._id < b._id ? -1 : 1)),
    );
  }

  /** Sets fields of a feed (the API's changes, a run's outcome). */
  async set(feedId: string, fields: Partial<Omit<FeedDoc, '_id'>>, unset: (keyof FeedDoc)[] = []): Promise<void> {
    const update: Record<string, unknown> = { $set: fields };
    if (unset.length > 0) update.$unset = Object.fromEntries(unset.map((key) => [key, '']));
    await guarded(() => this.feeds.updateOne({ _id: feedId }, update));
  }

  /** Deletes a feed and its bookkeeping; the hashes it brought stay in the bank. */
  async delete(feedId: string): Promise<void> {
    await guarded(() => this.feeds.deleteOne({ _id: feedId }));
    await guarded(() => this.items.deleteMany({ feedId }));
    await guarded(() => this.claims.deleteMany({ of: feedId }));
  }

  /** Enabled feeds whose due time falls in the bucket. */
  dueIn(bucket: number): Promise<FeedDoc[]> {
    return guarded(() => this.feeds.find({ due: bucket }).toArray());
  }

  /** Every enabled feed: the sweep that finds feeds whose bucket no poll read (downtime, a late write). */
  allEnabled(): Promise<FeedDoc[]> {
    return guarded(() => this.feeds.find({ enabled: true }).toArray());
  }

  /**
   * Claims the run of the feed due at its `dueAt`: won by exactly one caller (with the dead claims it passed), `held`
   * for the others. A candidate read before another replica ran the feed carries the old due time, whose claim is taken.
   */
  claimRun(feed: Pick<FeedDoc, '_id' | 'dueAt'>, now: Date, leaseMs: number): Promise<{ deadClaims: number } | 'held'> {
    return this.claimDue(feed._id, feed.dueAt, now, leaseMs, async () => {
      const current = await this.get(feed._id);
      return current?.enabled === true && current.dueAt.getTime() === feed.dueAt.getTime();
    });
  }

  /** Claims the attempt of a feedback job due at its `dueAt`, as `claimRun` claims a feed's run. */
  claimFeedback(
    job: Pick<FeedbackDoc, '_id' | 'dueAt'>,
    now: Date,
    leaseMs: number,
  ): Promise<{ deadClaims: number } | 'held'> {
    return this.claimDue(job._id, job.dueAt, now, leaseMs, async () => {
      const current = await this.getFeedback(job._id);
      return current?.state === 'pending' && current.dueAt.getTime() === job.dueAt.getTime();
    });
  }

  /**
   * A claim keyed `<of>@<dueAt>`. Its claimant then moves `dueAt` to its lease's end: a claim older than the lease whose
   * job is still due at `dueAt` was never recorded (its reply lost, the move failed, the replica died between them),
   * and the next key of its chain, `<of>@<dueAt>#<n>`, is claimed instead (claim-chain.ts). The chain grows by one key
   * a lease only while the move keeps failing, and a walk reads each key once.
   */
  private async claimDue(
    of: string,
    dueAt: Date,
    now: Date,
    leaseMs: number,
    stillDue: () => Promise<boolean>,
  ): Promise<{ deadClaims: number } | 'held'> {
    const key = `${of}@${dueAt.getTime()}`;
    const claimed = await guarded(() =>
      claimInChain(this.claims, {
        key: (step) => (step === 0 ? key : `${key}#${step}`),
        fields: { of },
        now,
        leaseMs,
        unrecorded: stillDue,
      }),
    );
    return claimed.won ? { deadClaims: claimed.deadClaims } : 'held';
  }

  /**
   * Deletes the claims older than a day, of feeds' runs and of feedback jobs (a finished job's stay until then, so
   * that a replica that read it before it finished cannot claim it again). A range over the whole collection, which
   * holds about a day of claims: the runner's sweep calls it every ten minutes.
   */
  async pruneClaims(now: Date): Promise<number> {
    const before = new Date(now.getTime() - CLAIM_KEEP_MS);
    const { deletedCount } = await guarded(() => this.claims.deleteMany({ at: { $lt: before } }));
    return deletedCount;
  }

  // Items: which hashes each feed brought

  async itemsOf(feedId: string): Promise<string[]> {
    const items = await guarded(() => this.items.find({ feedId }).toArray());
    return items.map((item) => item.hashId);
  }

  async addItems(feedId: string, hashIds: readonly string[]): Promise<void> {
    await guarded(() =>
      insertEach(
        this.items,
        hashIds.map((hashId) => ({ _id: `${feedId}:${hashId}`, feedId, hashId })),
      ),
    );
  }

  async removeItems(feedId: string, hashIds: readonly string[]): Promise<void> {
    await guarded(() => Promise.all(hashIds.map((hashId) => this.items.deleteOne({ _id: `${feedId}:${hashId}` }))));
  }

  // Feedback owed to exchanges

  /** Queues feedback once per feed and hash: true when it is new. */
  queueFeedback(doc: FeedbackDoc): Promise<boolean> {
    return guarded(() => insertUnlessExists(this.feedback, doc));
  }

  feedbackDueIn(bucket: number): Promise<FeedbackDoc[]> {
    return guarded(() => this.feedback.find({ due: bucket }).toArray());
  }

  pendingFeedback(): Promise<FeedbackDoc[]> {
    return guarded(() => this.feedback.find({ state: 'pending' }).toArray());
  }

  getFeedback(id: string): Promise<FeedbackDoc | null> {
    return guarded(() => this.feedback.findOne({ _id: id }));
  }

  async setFeedback(id: string, fields: Partial<Omit<FeedbackDoc, '_id'>>, unset: (keyof FeedbackDoc)[] = []) {
    const update: Record<string, unknown> = { $set: fields };
    if (unset.length > 0) update.$unset = Object.fromEntries(unset.map((key) => [key, '']));
    await guarded(() => this.feedback.updateOne({ _id: id }, update));
  }
}
