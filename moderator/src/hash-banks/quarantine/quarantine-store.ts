import { COLLECTIONS, HASH_BANK_LIMITS, insertUnlessExists, type HashKind, type HashMatchRecord } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';
import { UnavailableError } from '../../domain/errors';
import { guarded } from '../../store/mongo-errors';

/** Matches of one hash in one flood window. */
interface CountDoc {
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
  /** Matches seen while quarantined: the first HASH_BANK_LIMITS.heldMatches are held, the rest only counted. */
  seen: number;
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
  private readonly counts: Collection<CountDoc>;
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
  }

  /**
   * Counts one match of the hash in the window starting at `window`, and answers the window's count after it: one
   * `$inc` upsert by `_id` (atomic, so replicas counting at once each see their own count).
   */
  async countMatch(tenantId: string, hashId: string, window: Date): Promise<number> {
    const doc = await guarded(() =>
      this.counts.findOneAndUpdate(
        { _id: `${hashId}#${window.getTime()}` },
        { $inc: { n: 1 }, $setOnInsert: { tenantId, hashId, window } },
        { upsert: true, returnDocument: 'after' },
      ),
    );
    if (!doc || typeof doc.n !== 'number') throw new UnavailableError('match count not acknowledged');
    return doc.n;
  }

  quarantineOf(hashId: string): Promise<QuarantineDoc | null> {
    return guarded(() => this.quarantines.findOne({ _id: hashId }));
  }

  /** Writes the hash's quarantine whole (a new one, or the next of a hash released or dismissed before). */
  async putQuarantine(doc: QuarantineDoc): Promise<void> {
    const result = await guarded(() => this.quarantines.replaceOne({ _id: doc._id }, doc, { upsert: true }));
    if (!result.acknowledged || result.matchedCount + result.upsertedCount !== 1) {
      throw new UnavailableError('quarantine write not acknowledged');
    }
  }

  /**
   * Holds a match of a quarantined hash, unless the hash holds HASH_BANK_LIMITS.heldMatches already (then it is only
   * counted). Answers whether it is held (false: past the bound, or this record's match at that position was held).
   */
  async hold(quarantine: QuarantineDoc, recordId: string, match: HashMatchRecord, at: Date): Promise<boolean> {
    // The whole document comes back: FerretDB does not take a projection on findAndModify.
    const after = await guarded(() =>
      this.quarantines.findOneAndUpdate({ _id: quarantine._id }, { $inc: { seen: 1 } }, { returnDocument: 'after' }),
    );
    if (!after) throw new UnavailableError('held match count not acknowledged');
    if (after.seen > HASH_BANK_LIMITS.heldMatches) return false;
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
