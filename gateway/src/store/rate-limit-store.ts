import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '@vigil/proto';
import { countedUntil, slotMsOf, type WindowCount } from '../rate-limit/window-counter';

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
 * Counts as text. FerretDB v1 converts every subdocument to and from PostgreSQL JSON one by one: an array of 1,000
 * `{ key, windowMs, start, count }` took about 500 ms to write and read back on a busy 2-core machine, the same counts as
 * one string a tenth of that. Grouped by window length: a line `%<windowMs> <start>` opens a group whose slots (a tenth
 * of the window each) are numbered from `start`; each line `<key> <c0>,<c1>,…` below it is a key's counts in those
 * slots (empty for none), so a key's name is written once for all its slots. Keys are API key ids (`key_<ulid>`) or
 * `<limit>:<client address>`: no spaces or line breaks.
 *
 * `decodeCounts` also reads the earlier form (`@<windowMs> <start>`, then `<count> <key>` lines), which replicas of
 * the previous release write during a rolling upgrade.
 */
export function encodeCounts(counts: readonly WindowCount[]): string {
  const groups = new Map<number, { first: number; keys: Map<string, Map<number, number>> }>();
  for (const { key, windowMs, start, count } of counts) {
    let group = groups.get(windowMs);
    if (!group) groups.set(windowMs, (group = { first: start, keys: new Map<string, Map<number, number>>() }));
    group.first = Math.min(group.first, start);
    let slots = group.keys.get(key);
    if (!slots) group.keys.set(key, (slots = new Map<number, number>()));
    slots.set(start, (slots.get(start) ?? 0) + count);
  }
  const lines: string[] = [];
  for (const [windowMs, { first, keys }] of groups) {
    const slotMs = slotMsOf(windowMs);
    lines.push(`%${windowMs} ${first}`);
    for (const [key, slots] of keys) {
      const values: string[] = [];
      for (const [start, count] of slots) values[Math.round((start - first) / slotMs)] = String(count);
      lines.push(`${key} ${Array.from(values, (value) => value ?? '').join(',')}`);
    }
  }
  return lines.join('\n');
}

const GROUP_LINE = /^%(\d{1,12}) (\d{1,15})$/;
const SLOTS_LINE = /^(\S{1,200}) ((?:\d{0,10},){0,40}\d{0,10})$/;
const WINDOW_LINE = /^@(\d{1,12}) (\d{1,15})$/;
const COUNT_LINE = /^(\d{1,10}) (\S{1,200})$/;

/** The counts of `encodeCounts`; a line it cannot read (another version's, a damaged one) is left out. */
export function decodeCounts(text: unknown): WindowCount[] {
  if (typeof text !== 'string') return [];
  const counts: WindowCount[] = [];
  let group: { windowMs: number; first: number } | undefined;
  let window: { windowMs: number; start: number } | undefined;
  for (const line of text.split('\n')) {
    const opened = GROUP_LINE.exec(line);
    if (opened) {
      const windowMs = Number(opened[1]);
      group = windowMs > 0 ? { windowMs, first: Number(opened[2]) } : undefined;
      window = undefined;
      continue;
    }
    const header = WINDOW_LINE.exec(line);
    if (header) {
      const windowMs = Number(header[1]);
      window = windowMs > 0 ? { windowMs, start: Number(header[2]) } : undefined;
      group = undefined;
      continue;
    }
    if (group) {
      const slots = SLOTS_LINE.exec(line);
      if (!slots) continue;
      const { windowMs, first } = group;
      slots[2]!.split(',').forEach((value, index) => {
        if (value !== '' && Number(value) > 0) {
          counts.push({ key: slots[1]!, windowMs, start: first + index * slotMsOf(windowMs), count: Number(value) });
        }
      });
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
