import { COLLECTIONS, transparencyMonthKey, type TransparencyCountsDoc } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';

/**
 * Reads the transparency report's counters the moderator writes (`transparency_counts`, see proto's
 * transparency-report.ts). A period is read a month at a time by the `month` field, an equality the store serves from
 * its index: one command per month, each answering the month's day documents (one per day and writing process), never
 * the records or events.
 */
export class TransparencyCountStore {
  private readonly counters: Collection<TransparencyCountsDoc>;

  constructor(db: Db) {
    this.counters = db.collection(COLLECTIONS.transparencyCounts);
  }

  /** Every writer's day documents of the tenant in the given `YYYY-MM` months. */
  async months(tenantId: string, months: readonly string[]): Promise<TransparencyCountsDoc[]> {
    const found = await Promise.all(
      months.map((month) =>
        this.counters
          .find({ month: transparencyMonthKey(tenantId, `${month}-01`) }, { projection: { day: 1, counts: 1 } })
          .toArray(),
      ),
    );
    return found.flat();
  }
}
