import type { Consumer, ConsumerEndBatchProcessEvent, IMemberAssignment } from 'kafkajs';
import { Counter, Gauge, type Registry } from 'prom-client';

/** The part of a kafkajs consumer the metrics listen to. */
export type InstrumentedConsumer = Pick<Consumer, 'on' | 'events'>;

/** Messages a partition holds past the batch just handled: its high watermark minus the next offset to handle. */
export function lagAfter(batch: Pick<ConsumerEndBatchProcessEvent['payload'], 'highWatermark' | 'lastOffset'>): number {
  const lag = BigInt(batch.highWatermark) - (BigInt(batch.lastOffset) + 1n);
  return lag > 0n ? Number(lag) : 0;
}

/**
 * A consumer group member's health, from kafkajs' instrumentation events, without a request of its own: the lag of
 * each partition it handles (from the high watermark each fetched batch carries, so a partition that is not fetched
 * keeps its last value), the partitions it holds, its rebalances, and when it last fetched and last finished a batch.
 * The two timestamps tell a replica that stopped consuming (a stuck handler, a member stuck in a join) from one with
 * nothing to do: an idle member still fetches about once a heartbeat interval. Names are `<prefix>_<name>_<unit>`,
 * with `prefix` the service and subsystem (`moderator_ingest_consumer`); labels are topics and partition numbers.
 */
export class ConsumerMetrics {
  private readonly lag: Gauge<'topic' | 'partition'>;
  private readonly assigned: Gauge<'topic'>;
  private readonly rebalances: Counter;
  private readonly lastFetch: Gauge;
  private readonly lastBatch: Gauge;
  /** The lag series set, by topic then partition: those of partitions handed to another member are removed. */
  private readonly lagSeries = new Map<string, Set<number>>();
  /** Topics with an assigned-partitions series, so a topic no longer assigned reads 0 rather than its old count. */
  private readonly assignedTopics = new Set<string>();

  constructor(registry: Registry, prefix: string) {
    const registers = [registry];
    this.lag = new Gauge({
      name: `${prefix}_lag_messages`,
      help: "Messages of a partition past the last batch this member handled (the batch's high watermark minus its next offset)",
      labelNames: ['topic', 'partition'],
      registers,
    });
    this.assigned = new Gauge({
      name: `${prefix}_assigned_partitions`,
      help: 'Partitions the group gave this member at its last join, by topic (0 once it stops or crashes)',
      labelNames: ['topic'],
      registers,
    });
    this.rebalances = new Counter({
      name: `${prefix}_rebalances_total`,
      help: 'Group joins this member completed (one per rebalance it took part in, the first join included)',
      registers,
    });
    this.lastFetch = new Gauge({
      name: `${prefix}_last_fetch_timestamp_seconds`,
      help: 'When this member last received a fetch response, Unix seconds (0: never)',
      registers,
    });
    this.lastBatch = new Gauge({
      name: `${prefix}_last_batch_timestamp_seconds`,
      help: 'When this member last finished handling a batch of messages, Unix seconds (0: never)',
      registers,
    });
  }

  /** Listens to `consumer`'s events; call before it connects. */
  attach(consumer: InstrumentedConsumer): void {
    const { events } = consumer;
    consumer.on(events.GROUP_JOIN, ({ payload }) => this.joined(payload.memberAssignment));
    consumer.on(events.FETCH, ({ timestamp }) => this.lastFetch.set(timestamp / 1000));
    consumer.on(events.END_BATCH_PROCESS, ({ payload, timestamp }) => this.batchHandled(payload, timestamp));
    // A member that stopped or crashed holds nothing until it joins again.
    consumer.on(events.STOP, () => this.left());
    consumer.on(events.CRASH, () => this.left());
  }

  /** A join completed, this member now holding `assignment` (possibly nothing: more members than partitions). */
  joined(assignment: IMemberAssignment): void {
    this.rebalances.inc();
    this.hold(assignment);
  }

  /** The member stopped or crashed. */
  left(): void {
    this.hold({});
  }

  private hold(assignment: IMemberAssignment): void {
    for (const topic of this.assignedTopics) if (!(topic in assignment)) this.assigned.set({ topic }, 0);
    for (const [topic, partitions] of Object.entries(assignment)) {
      this.assigned.set({ topic }, partitions.length);
      this.assignedTopics.add(topic);
    }
    for (const [topic, partitions] of this.lagSeries) {
      const kept = new Set(assignment[topic] ?? []);
      for (const partition of partitions) {
        if (kept.has(partition)) continue;
        this.lag.remove({ topic, partition: String(partition) });
        partitions.delete(partition);
      }
    }
  }

  batchHandled(
    batch: Pick<ConsumerEndBatchProcessEvent['payload'], 'topic' | 'partition' | 'highWatermark' | 'lastOffset'>,
    timestamp: number,
  ): void {
    this.lag.set({ topic: batch.topic, partition: String(batch.partition) }, lagAfter(batch));
    let partitions = this.lagSeries.get(batch.topic);
    if (!partitions) this.lagSeries.set(batch.topic, (partitions = new Set()));
    partitions.add(batch.partition);
    this.lastBatch.set(timestamp / 1000);
  }
}
