import { COLLECTIONS, HASH_BANK_LIMITS, type HashKind, type HashMatchRecord } from '@vigil/proto';
import { insertUnlessExists } from '@vigil/proto/platform';
import type { Collection, Db } from 'mongodb';
import { UnavailableError } from '../../domain/errors';
import { guarded } from '../../store/mongo-errors';

/** How long one match keeps claiming a slot of its window while other matches take them first. */
const CLAIM_DEADLINE_MS = 10_000;

/** One match of a hash in a flood window: slot `n` of the window (`_id`: `<hashId>#<window start, ms>#<n>`). */
interface SlotDoc {
  _id: string;
  tenantId: string;
  hashId: string;
  n: number;
  /** When the window starts. */
  window: Date;
}

/**
 * A hash's flood quarantine, one document per hash (`_id`: its id). `quarantined`: its matches are held; `released`
 * or `dismissed` by a person at `decidedAt` (a release whose held matches are still being applied has `applying`).
 */
export interface QuarantineDoc {
  _id: string;
  tenantId: string;
  bankId: string;
  bankName: string;
  kind: HashKind;
  /** The how-manieth quarantine of this hash: the version of its HashQuarantined event. */
  n: number;
  state: 'quarantined' | 'released' | 'dismissed';
  threshold: number;
  windowSeconds: number;
  /** Matches counted in the window when it passed the threshold. */
  count: number;
  /** Matches past HASH_BANK_LIMITS.heldMatches held ones: counted, not kept (concurrent ones may count once). */
  overflow: number;
  since: Date;
  decidedAt?: Date;
  applying?: boolean;
}

/** A match held by a quarantined hash: the record, the position, the distance and the rest of the match. */
export interface HeldMatchDoc {
  /** `<hashId>#<recordId>#<position>`: the same record's match is held once. */
  _id: string;
  tenantId: string;
  hashId: string;
  recordId: string;
  /** The quarantine that held it. */
  n: number;
  match: HashMatchRecord;
  at: Date;
}

/**
 * The store of flood quarantines, owned by the moderator: match counts, quarantines and held matches. Every query
 * selects by equality on one top-level field (`_id`, `tenantId`, `hashId`), the filters FerretDB takes to an index.
 * Every write checks the server's answer: an unacknowledged or unmatched write is an error, never counted as done.
 */
export class QuarantineStore {
  private readonly counts: Collection<SlotDoc>;
  /** The next free slot of each (hash, window) this replica counted in lately: usually the one to claim. */
  private readonly nextSlot = new Map<string, number>();
  private readonly quarantines: Collection<QuarantineDoc>;
  private readonly held: Collection<HeldMatchDoc>;

  constructor(db: Db) {
    this.counts = db.collection(COLLECTIONS.hashMatchCounts);
    this.quarantines = db.collection(COLLECTIONS.hashQuarantines);
    this.held = db.collection(COLLECTIONS.heldHashMatches);
  }

  async ensureIndexes(): Promise<void> {
    await guarded(() => this.quarantines.createIndex({ tenantId: 1 }, { name: 'tenant' }));
    await guarded(() => this.held.createIndex({ hashId: 1 }, { name: 'hash' }));
    await guarded(() => this.counts.createIndex({ hashId: 1 }, { name: 'hash' }));
  }

  /**
   * Counts one match of the hash in the window starting at `window`, and answers its number in the window. Each match
   * claims the next slot of the window by a unique insert, so replicas counting at once each get a number of their own.
   * (A `$inc` would be one write, but FerretDB v1 applies concurrent `$inc`s to one document by read and write: some
   * are lost.) The slots are dense, 1 to n; a replica starts from its own last slot, or finds the first free one in
   * O(log n) reads by `_id`. The first slot of a window deletes the hash's slots of older windows.
   */
  async countMatch(tenantId: string, hashId: string, window: Date): Promise<number> {
    const key = `${hashId}#${window.getTime()}`;
    let n = this.nextSlot.get(key) ?? (await this.firstFree(key));
    // Each slot lost went to another match, so the count moves on every round: a match loses at most once per match
    // counted beside it. Bounded by time, not by rounds, so that a burst of many at once still gets through.
    const deadline = Date.now() + CLAIM_DEADLINE_MS;
    for (let attempt = 0; attempt < 20 || Date.now() < deadline; attempt++) {
      const slot: SlotDoc = { _id: `${key}#${n}`, tenantId, hashId, n, window };
      if (await guarded(() => insertUnlessExists(this.counts, slot))) {
        if (this.nextSlot.size >= 10_000) this.nextSlot.clear();
        this.nextSlot.set(key, n + 1);
        if (n === 1) await this.dropOlderSlots(hashId, window);
        return n;
      }
      n = await this.firstFree(key, n + 1);
    }
    throw new UnavailableError('too many concurrent matches of one hash, try again');
  }

  /** The first slot of `key` not yet claimed, at or after `from` (slots are claimed in order, without gaps). */
  private async firstFree(key: string, from = 1): Promise<number> {
    const taken = async (n: number) =>
      (await guarded(() => this.counts.findOne({ _id: `${key}#${n}` }, { projection: { _id: 1 } }))) !== null;
    if (!(await taken(from))) return from;
    let low = from; // taken
    let step = 1;
    while (await taken(low + step)) {
      low += step;
      step *= 2;
    }
    let high = low + step; // free
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if (await taken(mid)) low = mid;
      else high = mid;
    }
    return high;
  }

  private async dropOlderSlots(hashId: string, window: Date): Promise<void> {
    const result = await guarded(() => this.counts.deleteMany({ hashId, window: { $lt: window } }));
    if (!result.acknowledged) throw new UnavailableError('old match counts not deleted');
  }

  quarantineOf(hashId: string): Promise<QuarantineDoc | null> {
    return guarded(() => this.quarantines.findOne({ _id: hashId }));
  }

  /**
   * Writes quarantine `doc.n` of the hash: the first (an insert: a replica that wrote it first wins), or the next of a
   * hash released or dismissed as quarantine `previous` (a replace of that one; a replica that moved it on first wins).
   * False when another replica wrote it; never overwrites the counts of a quarantine already written.
   */
  async startQuarantine(doc: QuarantineDoc, previous: number | undefined): Promise<boolean> {
    if (previous === undefined) return guarded(() => insertUnlessExists(this.quarantines, doc));
    const result = await guarded(() => this.quarantines.replaceOne({ _id: doc._id, n: previous }, doc));
    if (!result.acknowledged) throw new UnavailableError('quarantine write not acknowledged');
    return result.matchedCount === 1;
  }

  /**
   * Holds a match of a quarantined hash, unless the hash holds HASH_BANK_LIMITS.heldMatches already (then it is only
   * counted). Answers whether it is held (false: past the bound, or this record's match at that position was held).
   * Concurrent holds may pass the bound by the few in flight.
   */
  async hold(quarantine: QuarantineDoc, recordId: string, match: HashMatchRecord, at: Date): Promise<boolean> {
    if ((await this.heldCount(quarantine._id)) >= HASH_BANK_LIMITS.heldMatches) {
      const result = await guarded(() =>
        this.quarantines.updateOne({ _id: quarantine._id }, { $inc: { overflow: 1 } }),
      );
      if (!result.acknowledged) throw new UnavailableError('overflow count not acknowledged');
      return false;
    }
    const doc: HeldMatchDoc = {
      _id: `${quarantine._id}#${recordId}#${match.position}`,
      tenantId: quarantine.tenantId,
      hashId: quarantine._id,
      recordId,
      n: quarantine.n,
      match,
      at,
    };
    return guarded(() => insertUnlessExists(this.held, doc));
  }

  /** How many matches the hash holds (selected by `hashId`, an index; at most about HASH_BANK_LIMITS.heldMatches). */
  heldCount(hashId: string): Promise<number> {
    return guarded(() => this.held.countDocuments({ hashId }));
  }

  /** The matches the hash holds (at most HASH_BANK_LIMITS.heldMatches), oldest first. */
  async heldOf(hashId: string): Promise<HeldMatchDoc[]> {
    const docs = await guarded(() => this.held.find({ hashId }).toArray());
    return docs.sort((a, b) => a.at.getTime() - b.at.getTime() || (a._id < b._id ? -1 : 1));
  }

  async dropHeld(id: string): Promise<void> {
    const result = await guarded(() => this.held.deleteOne({ _id: id }));
    if (!result.acknowledged) throw new UnavailableError('held match deletion not acknowledged');
  }

  /** Drops every match the hash holds; answers how many. */
  async dropAllHeld(hashId: string): Promise<number> {
    const result = await guarded(() => this.held.deleteMany({ hashId }));
    if (!result.acknowledged) throw new UnavailableError('held match deletion not acknowledged');
    return result.deletedCount;
  }

  /** The tenant's quarantines a person has to look at: those quarantined, and releases still applying. */
  async openOf(tenantId: string): Promise<QuarantineDoc[]> {
    const docs = await guarded(() => this.quarantines.find({ tenantId }).toArray());
    return docs
      .filter((doc) => doc.state === 'quarantined' || doc.applying === true)
      .sort((a, b) => a.since.getTime() - b.since.getTime() || (a._id < b._id ? -1 : 1));
  }

  /** A person's decision on the hash's quarantine (read just before by the caller). */
  async decide(hashId: string, change: { state: 'released' | 'dismissed'; decidedAt: Date; applying: boolean }) {
    const result = await guarded(() => this.quarantines.updateOne({ _id: hashId }, { $set: change }));
    if (!result.acknowledged || result.matchedCount !== 1) {
      throw new UnavailableError('quarantine decision not acknowledged');
    }
  }

  /** The last of a release: its held matches are applied. */
  async applied(hashId: string): Promise<void> {
    const result = await guarded(() => this.quarantines.updateOne({ _id: hashId }, { $set: { applying: false } }));
    if (!result.acknowledged || result.matchedCount !== 1) throw new UnavailableError('release not acknowledged');
  }
}
