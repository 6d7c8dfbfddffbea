import type { Consumer, ConsumerConfig, EachBatchPayload, EachMessagePayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { BatchHeartbeat } from './batch-heartbeat';
import type { ConsumerMetrics } from './consumer-metrics';
import { consumerTimingOptions, type ConsumerTiming } from './consumer-timing';
import { OffsetCommits } from './offset-commits';

/**
 * How a consumer handles what it reads: whole batches, committing what it handled itself (`handled`), or one message
 * at a time with kafkajs' own commits after each.
 */
export type GroupConsumerHandler =
  | {
      /** Offsets of handled batches are committed together every this many milliseconds; 0 commits each batch. */
      commitIntervalMs?: number;
      eachBatch(payload: EachBatchPayload, beat: BatchHeartbeat): Promise<void>;
    }
  | { eachMessage(payload: EachMessagePayload, beat: BatchHeartbeat): Promise<void> };

export interface GroupConsumerOptions {
  kafka: Kafka;
  groupId: string;
  /** Session, heartbeat and rebalance timeouts of the group membership. */
  timing: ConsumerTiming;
  /** Lag, assignment, rebalances and liveness of the group membership, from kafkajs' events. */
  metrics?: ConsumerMetrics;
  topics: readonly string[];
  /** Partitions worked at once. */
  concurrency: number;
  log: Logger;
  /** Fetch options beyond the timing's: more data per fetch, or a longer fetch wait. */
  fetch?: Pick<ConsumerConfig, 'minBytes' | 'maxWaitTimeInMs'>;
  handler: GroupConsumerHandler;
  /** Told each time this member has joined the group (a new generation: partitions may have moved between members). */
  onJoin?: () => void;
}

/**
 * The lifecycle every Kafka consumer of the services shares: a group member with the timing of CONSUMER_TIMING_DEFAULTS
 * and no topic auto-creation, its metrics attached before it connects, reading its topics from the beginning, each
 * batch (or message) worked on under a BatchHeartbeat so that a slow one keeps the membership, and a stop that commits
 * what was handled before the group is left. A handler that throws is kafkajs' to retry: it re-joins and re-delivers
 * what was not committed (its default `restartOnFailure`).
 *
 * A consumer extends it with what it does with a batch or a message. Batch handlers commit with `handled(payload)` once every message of the batch is done; `moving` tells a handler
 * between two pieces of work that what is left belongs, or may belong, to another member (or that the consumer stops).
 */
export class GroupConsumer {
  private readonly consumer: Consumer;
  private readonly commits?: OffsetCommits;
  private stoppingNow = false;

  constructor(private readonly group: GroupConsumerOptions) {
    this.consumer = group.kafka.consumer({
      groupId: group.groupId,
      allowAutoTopicCreation: false,
      ...consumerTimingOptions(group.timing),
      ...group.fetch,
    });
    group.metrics?.attach(this.consumer);
    const { onJoin } = group;
    if (onJoin) this.consumer.on(this.consumer.events.GROUP_JOIN, () => onJoin());
    const { handler } = group;
    if ('eachBatch' in handler) {
      this.commits = new OffsetCommits(this.consumer, handler.commitIntervalMs ?? 0, group.log);
    }
  }

  /** Whether `stop` was called. */
  get stopping(): boolean {
    return this.stoppingNow;
  }

  async start(): Promise<void> {
    const { handler, timing, topics, concurrency } = this.group;
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [...topics], fromBeginning: true });
    const beating = <P extends { heartbeat(): Promise<void> }>(
      payload: P,
      work: (payload: P, beat: BatchHeartbeat) => Promise<void>,
    ) =>
      BatchHeartbeat.run(
        () => payload.heartbeat(),
        timing.heartbeatIntervalMs,
        (beat) => work(payload, beat),
      );
    if ('eachBatch' in handler) {
      await this.consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: concurrency,
        eachBatch: (payload) => beating(payload, (p, beat) => handler.eachBatch(p, beat)),
      });
    } else {
      await this.consumer.run({
        partitionsConsumedConcurrently: concurrency,
        eachMessage: (payload) => beating(payload, (p, beat) => handler.eachMessage(p, beat)),
      });
    }
  }

  /** Commits what was handled and leaves the group; batches in flight finish (or stop at `moving`) first. */
  async stop(): Promise<void> {
    this.stoppingNow = true;
    await this.commits?.close();
    await this.consumer.disconnect();
  }

  /** Whether the consumer stops, a heartbeat failed, or the batch's partition is moving to another member. */
  moving(payload: Pick<EachBatchPayload, 'isRunning' | 'isStale'>, beat: BatchHeartbeat): boolean {
    return this.stoppingNow || beat.failed || !payload.isRunning() || payload.isStale();
  }

  /**
   * Notes the batch as handled: its next offset is committed (at once, or with the others within the commit interval;
   * a failed commit at once is thrown, so kafkajs rejoins and re-delivers), and the fetch position moves past it.
   * `written`: work of the batch still being finished (writes gathered across batches); the offset is committed only
   * once it is done, after the partition's earlier batches, while the fetch position moves on now (see OffsetCommits).
   */
  async handled(payload: Pick<EachBatchPayload, 'batch' | 'resolveOffset'>, written?: Promise<void>): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    const last = messages[messages.length - 1];
    if (!last) return;
    if (!this.commits) throw new Error('a consumer of single messages has its offsets committed by kafkajs');
    await this.commits.handled(topic, partition, (BigInt(last.offset) + 1n).toString(), written);
    // Without auto-resolve the fetch position only moves with resolved offsets.
    payload.resolveOffset(last.offset);
  }
}
