import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '@vigil/proto';
import type { WindowCount } from '../rate-limit/window-counter';

/**
 * One document per gateway instance, holding that instance's counts in the windows not yet ended. Only its instance
 * writes it (a whole-document upsert by `_id`), so no two writers ever race on a document: FerretDB v1 runs
 * conditional updates and `$inc` as read-then-write, which would lose increments under concurrent writers.
 */
export interface RateLimitCountsDoc {
  _id: string;
  counts: WindowCount[];
  /** When the last of `counts`' windows ends: past it the document says nothing any more. */
  expiresAt: Date;
  updatedAt: Date;
}

/** How long past its last window a document is kept before any instance deletes it. */
const KEEP_EXPIRED_MS = 60_000;

function isCount(value: unknown): value is WindowCount {
  if (typeof value !== 'object' || value === null) return false;
  const { key, windowMs, start, count } = value as Record<string, unknown>;
  return (
    typeof key === 'string' &&
    typeof windowMs === 'number' &&
    windowMs > 0 &&
    typeof start === 'number' &&
    typeof count === 'number' &&
    count >= 0
  );
}

/** The counts gateway instances exchange for the shared rate limit (see rate-limit/shared-rate-limiter.ts). */
export class RateLimitStore {
  private readonly docs: Collection<RateLimitCountsDoc>;

  constructor(db: Db) {
    this.docs = db.collection(COLLECTIONS.rateLimitCounts);
  }

  /**
   * Replaces this instance's document. There is no TTL index (FerretDB v1 has none): the document of an instance that
   * stopped is deleted by `deleteExpired` once its windows ended.
   */
  async publish(instanceId: string, counts: WindowCount[], now: number): Promise<void> {
    const expiresAt = new Date(counts.reduce((last, c) => Math.max(last, c.start + c.windowMs), now));
    await this.docs.replaceOne({ _id: instanceId }, { counts, expiresAt, updatedAt: new Date(now) }, { upsert: true });
  }

  /**
   * The counts of every other instance in windows not yet ended. The collection holds one document per instance
   * that ran in the last minute or so, so reading it whole stays small.
   */
  async othersCounts(instanceId: string, now: number): Promise<WindowCount[]> {
    const docs = await this.docs.find({ expiresAt: { $gt: new Date(now) } }).toArray();
    return docs.filter((doc) => doc._id !== instanceId).flatMap((doc) => (doc.counts ?? []).filter(isCount));
  }

  /** Deletes the documents of instances whose windows all ended a while ago (stopped or idle instances). */
  async deleteExpired(now: number): Promise<void> {
    await this.docs.deleteMany({ expiresAt: { $lt: new Date(now - KEEP_EXPIRED_MS) } });
  }
}
