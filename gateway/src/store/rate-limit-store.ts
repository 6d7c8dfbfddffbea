import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '@vigil/proto';
import { countedUntil, type WindowCount } from '../rate-limit/window-counter';

/**
 * One document per gateway instance, holding that instance's counts in the slots still counted. Only its instance
 * writes it (a whole-document upsert by `_id`), so no two writers ever race on a document: FerretDB v1 runs
 * conditional updates and `$inc` as read-then-write, which would lose increments under concurrent writers.
 */
export interface RateLimitCountsDoc {
  _id: string;
  /** `encodeCounts`: one string rather than an array of subdocuments, see there. */
  counts: string;
  /** When the last of the counts stops counting: past it the document says nothing any more. */
  expiresAt: Date;
  updatedAt: Date;
}

/** How long past its last window a document is kept before any instance deletes it. */
const KEEP_EXPIRED_MS = 60_000;

/**
 * Counts as text, grouped by slot: a line `@<windowMs> <start>` opens a slot (of a window of `windowMs`, starting at
 * `start`), each line `<count> <key>` below it is a key's count there. FerretDB v1 converts every subdocument to and from PostgreSQL JSON one by one: an array of
 * 1,000 `{ key, windowMs, start, count }` took about 500 ms to write and read back on a busy 2-core machine, the same
 * counts as one string a tenth of that. Keys are API key ids (`key_<ulid>`): no spaces or line breaks.
 */
export function encodeCounts(counts: readonly WindowCount[]): string {
  const byWindow = new Map<string, string[]>();
  for (const { key, windowMs, start, count } of counts) {
    const header = `@${windowMs} ${start}`;
    let lines = byWindow.get(header);
    if (!lines) byWindow.set(header, (lines = []));
    lines.push(`${count} ${key}`);
  }
  return [...byWindow].map(([header, lines]) => `${header}\n${lines.join('\n')}`).join('\n');
}

const WINDOW_LINE = /^@(\d{1,12}) (\d{1,15})$/;
const COUNT_LINE = /^(\d{1,10}) (\S{1,200})$/;

/** The counts of `encodeCounts`; a line it cannot read (another version's, a damaged one) is left out. */
export function decodeCounts(text: unknown): WindowCount[] {
  if (typeof text !== 'string') return [];
  const counts: WindowCount[] = [];
  let window: { windowMs: number; start: number } | undefined;
  for (const line of text.split('\n')) {
    const header = WINDOW_LINE.exec(line);
    if (header) {
      const windowMs = Number(header[1]);
      window = windowMs > 0 ? { windowMs, start: Number(header[2]) } : undefined;
      continue;
    }
    const entry = COUNT_LINE.exec(line);
    if (entry && window) counts.push({ key: entry[2]!, ...window, count: Number(entry[1]) });
  }
  return counts;
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
    const expiresAt = new Date(counts.reduce((last, c) => Math.max(last, countedUntil(c)), now));
    await this.docs.replaceOne(
      { _id: instanceId },
      { counts: encodeCounts(counts), expiresAt, updatedAt: new Date(now) },
      { upsert: true },
    );
  }

  /**
   * The counts of every other instance in windows not yet ended. The collection holds one document per instance that
   * counted in a window not ended a minute ago (a few per replica and deployment), so reading it whole stays small.
   */
  async othersCounts(instanceId: string, now: number): Promise<WindowCount[]> {
    const docs = await this.docs.find({ expiresAt: { $gt: new Date(now) } }).toArray();
    return docs.filter((doc) => doc._id !== instanceId).flatMap((doc) => decodeCounts(doc.counts));
  }

  /** Deletes the documents of instances whose windows all ended a while ago (stopped or idle instances). */
  async deleteExpired(now: number): Promise<void> {
    await this.docs.deleteMany({ expiresAt: { $lt: new Date(now - KEEP_EXPIRED_MS) } });
  }
}
