import { COLLECTIONS, type BankSuspension } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';
import type { RecordState } from '../domain/record';
import { replaceOrInsert, writtenUnlessDuplicate } from './conditional-writes';
import { guarded } from './mongo-errors';

/** A user's flagged, not deleted records (see COLLECTIONS.userFlaggedCounts). */
export interface FlaggedCountDoc {
  _id: string;
  count: number;
}

/**
 * Each user's count of flagged, not deleted records: counted from the `records` projection, stored in
 * `user_flagged_counts` (the suspension threshold and the user views read it).
 */
export class FlaggedCounts {
  readonly counts: Collection<FlaggedCountDoc>;
  private readonly records: Collection<RecordState>;

  constructor(db: Db) {
    this.counts = db.collection<FlaggedCountDoc>(COLLECTIONS.userFlaggedCounts, { ignoreUndefined: true });
    this.records = db.collection<RecordState>(COLLECTIONS.records, { ignoreUndefined: true });
  }

  /**
   * Stores a user's flagged count: an upsert by `_id` (two first writers racing: the loser replaces); a count of 0 is
   * no document, as after a rebuild.
   */
  async setFlaggedCount(userId: string, count: number): Promise<void> {
    if (count === 0) {
      await guarded(() => this.counts.deleteOne({ _id: userId }));
      return;
    }
    await guarded(() =>
      replaceOrInsert(
        () => writtenUnlessDuplicate(this.counts.insertOne({ _id: userId, count })),
        async () => (await this.counts.replaceOne({ _id: userId }, { count })).matchedCount > 0,
        false,
      ),
    );
  }

  async countFlagged(tenantId: string, userId: string): Promise<number> {
    return guarded(() => this.records.countDocuments({ tenantId, userId, status: 'Flagged', deleted: false }));
  }

  /**
   * One of the user's flagged, not deleted records whose flag came from a `flag_and_suspend` bank (the oldest),
   * `exceptRecordId` left out; undefined when there is none.
   */
  async findBankSuspension(
    tenantId: string,
    userId: string,
    exceptRecordId?: string,
  ): Promise<(BankSuspension & { recordId: string }) | undefined> {
    const found = await guarded(() =>
      this.records.findOne(
        {
          tenantId,
          userId,
          status: 'Flagged',
          deleted: false,
          suspendsUser: { $exists: true },
          ...(exceptRecordId !== undefined ? { _id: { $ne: exceptRecordId } } : {}),
        },
        { projection: { _id: 1, suspendsUser: 1 }, sort: { _id: 1 } },
      ),
    );
    return found?.suspendsUser ? { ...found.suspendsUser, recordId: found._id } : undefined;
  }

  /**
   * Counts the user's flagged records and stores the count on the user's projection, before any status it leads to:
   * a reader that sees the new status also sees the count behind it.
   */
  async refreshFlaggedCount(tenantId: string, userId: string): Promise<number> {
    const count = await this.countFlagged(tenantId, userId);
    await this.setFlaggedCount(userId, count);
    return count;
  }

  /** Flagged, not deleted records per user (a full read, for a rebuild). */
  async *countFlaggedByUser(): AsyncGenerator<{ userId: string; count: number }> {
    const counts = this.records.aggregate<{ _id: string; count: number }>([
      { $match: { status: 'Flagged', deleted: false, userId: { $exists: true } } },
      { $group: { _id: '$userId', count: { $sum: 1 } } },
    ]);
    for await (const { _id: userId, count } of counts) yield { userId, count };
  }
}
