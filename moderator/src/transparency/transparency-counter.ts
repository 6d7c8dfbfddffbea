import {
  COLLECTIONS,
  transparencyCountsOf,
  transparencyMonthKey,
  ulid,
  type DomainEvent,
  type TransparencyCount,
  type TransparencyCountsDoc,
} from '@vigil/proto';
import { WriteGroups } from '@vigil/proto/platform';
import type { Collection, Db } from 'mongodb';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { writeCounters, type CounterWrite } from '../store/counter-writes';
import { guarded } from '../store/mongo-errors';

/** The `_id` of one writer's counters of a tenant's day (see TransparencyCountsDoc). */
const transparencyDocId = (tenantId: string, day: string, writer: string): string => `${tenantId}|${day}|${writer}`;

/** Counts written at most this many events' worth per command. */
const MAX_GROUP = 10_000;

interface Counted {
  tenantId: string;
  counts: TransparencyCount[];
}

/** One document's update: `$inc` by dotted path, and what an upsert creates it with. */
export type TransparencyWrite = CounterWrite<Omit<TransparencyCountsDoc, '_id' | 'counts'>>;

/** The writes of a group of counts, merged per document (this writer's documents only); zero sums left out. */
export function transparencyWritesOf(items: readonly Counted[], writer: string): TransparencyWrite[] {
  const writes = new Map<string, TransparencyWrite>();
  for (const { tenantId, counts } of items) {
    for (const { day, path, by } of counts) {
      const id = transparencyDocId(tenantId, day, writer);
      let write = writes.get(id);
      if (!write) {
        write = { _id: id, inc: {}, setOnInsert: { tenantId, day, month: transparencyMonthKey(tenantId, day) } };
        writes.set(id, write);
      }
      const key = `counts.${path.join('.')}`;
      write.inc[key] = (write.inc[key] ?? 0) + by;
    }
  }
  for (const write of writes.values()) {
    for (const [key, by] of Object.entries(write.inc)) if (by === 0) delete write.inc[key];
  }
  return [...writes.values()].filter((write) => Object.keys(write.inc).length > 0);
}

/**
 * The transparency report's counters (proto's transparency-report.ts), added to as events are committed. Counts of
 * commits made at the same time go in one command (a group commit); an event that counts nowhere (most moderations:
 * nothing restricted) costs nothing. A failed write is retried, then logged and counted; it never fails the decision.
 */
export class TransparencyCounter {
  private readonly counters: Collection<TransparencyCountsDoc>;
  /** This process's documents: no two writers ever update the same one. */
  private readonly writer = ulid();
  private readonly groups: WriteGroups<Counted, undefined>;
  private readonly failures?: Counter;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    registry?: Registry,
  ) {
    this.counters = db.collection<TransparencyCountsDoc>(COLLECTIONS.transparencyCounts);
    this.groups = new WriteGroups(async (items) => {
      await this.write(items);
      return items.map(() => undefined);
    }, MAX_GROUP);
    if (registry) {
      this.failures = new Counter({
        name: 'moderator_transparency_count_failures_total',
        help: 'Groups of transparency report counts that could not be written after retries (those counts are missing)',
        registers: [registry],
      });
    }
  }

  async ensureIndexes(): Promise<void> {
    await guarded(() => this.counters.createIndex({ month: 1 }, { name: 'month' }));
  }

  /** Adds what committed `events` count (see `transparencyCountsOf`). Never throws. */
  async count(events: readonly DomainEvent[]): Promise<void> {
    const items: Counted[] = [];
    for (const event of events) {
      const counts = transparencyCountsOf(event);
      if (counts.length > 0) items.push({ tenantId: event.tenantId, counts });
    }
    if (items.length === 0) return;
    try {
      await Promise.all(items.map((item) => this.groups.write(item)));
    } catch (err) {
      this.failures?.inc();
      this.log.error({ err, events: items.length }, 'transparency counts not written');
    }
  }

  /** One bulk write of `$inc` upserts on this writer's documents (see writeCounters). */
  private async write(items: readonly Counted[]): Promise<void> {
    await writeCounters(this.db, this.counters, transparencyWritesOf(items, this.writer));
  }
}
