import { COLLECTIONS, transparencyCountsOf, type TransparencyCountsDoc } from '@vigil/proto';
import type { Db } from 'mongodb';
import { statementChunks, storeTraits } from '@vigil/proto/platform';
import { counterUpserts } from '../store/counter-writes';
import { eventOf } from '../store/event-doc';
import { transparencyWritesOf } from './transparency-counter';

/** The writer name of rebuilt documents: no process takes it (theirs are ULIDs). */
const REBUILD_WRITER = 'rebuild';

export const REBUILD_USAGE = `usage:
  transparency-counts rebuild <tenantId> [--before YYYY-MM-DD]
      recount the tenant's transparency report counters from its stored events, for the days before the given one
      (default today, UTC: the days no moderator writes to any more)`;

/**
 * Recounts a tenant's transparency report counters from the event store, for the closed days before `before`: the
 * tenant's events are read (an equality on `tenantId`: every event of the tenant is scanned, a repair, not a hot path),
 * counted as the moderator counts them when it commits, and the counters of those days are replaced by one document a
 * day. Days from `before` on are left to the moderators writing them. Returns how many events and days it counted.
 */
export async function rebuildTransparencyCounts(
  db: Db,
  tenantId: string,
  before: string,
): Promise<{ events: number; days: number }> {
  const events = db.collection(COLLECTIONS.events);
  const counters = db.collection<TransparencyCountsDoc>(COLLECTIONS.transparencyCounts);
  const counted: Array<{ tenantId: string; counts: ReturnType<typeof transparencyCountsOf> }> = [];
  let seen = 0;
  for await (const doc of events.find({ tenantId })) {
    const event = eventOf(doc);
    seen += 1;
    const counts = transparencyCountsOf(event).filter((count) => count.day < before);
    if (counts.length > 0) counted.push({ tenantId, counts });
  }
  const writes = transparencyWritesOf(counted, REBUILD_WRITER);
  // The months the rebuilt days fall in, and any month with counters before `before`: their old day documents go.
  const months = new Set(writes.map((write) => write.setOnInsert.month));
  for (const month of await counters.distinct('month', { tenantId })) months.add(month);
  for (const month of months) {
    if (month.slice(tenantId.length + 1) > before.slice(0, 7)) continue;
    await counters.deleteMany({ month, day: { $lt: before } });
  }
  // `$inc` on fresh documents builds each one's tree from the dotted paths, as the moderator's writes do.
  // On FerretDB a few statements to a command (see statementChunks): a year of days in one would stall the store.
  for (const ops of statementChunks(await storeTraits(db), counterUpserts<TransparencyCountsDoc>(writes))) {
    if (ops.length > 0) await counters.bulkWrite(ops, { ordered: true });
  }
  return { events: seen, days: writes.length };
}
