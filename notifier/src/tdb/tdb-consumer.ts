import {
  BatchHeartbeat,
  DomainEvent,
  HEADERS,
  consumerTimingOptions,
  type ConsumerMetrics,
  type ConsumerTiming,
} from '@vigil/proto';
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Logger } from 'pino';
import { OffsetCommits, retry } from '@vigil/proto/platform';
import { SUBMITTED_EVENT_TYPES } from './tdb-submissions';

/** Messages decoded between two turns of the event loop: a batch of a few seconds must not hold the webhooks. */
const DECODED_PER_TURN = 32;
/**
 * A fetch waits for this much data or the batch wait, whichever comes first: under load a batch holds up to a few
 * seconds of events, so that calls carry many statements.
 */
const FETCH_MIN_BYTES = 1024 * 1024;

export interface TdbConsumerOptions {
  kafka: Kafka;
  /** Its own consumer group: submission lags, fails and retries without holding the webhooks. */
  groupId: string;
  topic: string;
  timing: ConsumerTiming;
  /** How long a fetch waits for events to gather, milliseconds (at most half the session timeout). */
  batchWaitMs: number;
  commitIntervalMs: number;
  metrics?: ConsumerMetrics;
  /**
   * Submits the batch's statements and records them (TdbSubmissions.submit); idempotent, throws only when the store
   * is out of reach (a statement's or a tenant's own failure is set aside there, so a batch waits for nothing else).
   */
  submit(events: DomainEvent[]): Promise<void>;
  log: Logger;
}

class Stopping extends Error {}

/**
 * The notifier's consumer of the events topic for the Transparency Database: each fetched batch (the events of up to
 * the batch wait) goes to TdbSubmissions, and its offsets are committed once every statement in it is submitted or
 * queued for a retry. A failure (MongoDB away) handles the batch again: statements already recorded are not recorded
 * twice, and their puids keep the database from storing them twice.
 */
export class TdbConsumer {
  private readonly consumer: Consumer;
  private readonly commits: OffsetCommits;
  private stopping = false;

  constructor(private readonly options: TdbConsumerOptions) {
    const timing = consumerTimingOptions(options.timing);
    this.consumer = options.kafka.consumer({
      groupId: options.groupId,
      allowAutoTopicCreation: false,
      ...timing,
      minBytes: FETCH_MIN_BYTES,
      // Longer than the heartbeat interval (the other consumers' fetch wait): a rebalance waits for this member's
      // fetch, at most half a session.
      maxWaitTimeInMs: Math.max(1, Math.min(options.batchWaitMs, Math.floor(options.timing.sessionTimeoutMs / 2))),
    });
    options.metrics?.attach(this.consumer);
    this.commits = new OffsetCommits(this.consumer, options.commitIntervalMs, options.log);
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [this.options.topic], fromBeginning: true });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      // One partition's batch at a time: a fetch's calls and inserts come one after another, not all at once.
      partitionsConsumedConcurrently: 1,
      eachBatch: (payload) =>
        BatchHeartbeat.run(
          () => payload.heartbeat(),
          this.options.timing.heartbeatIntervalMs,
          (beat) => this.handle(payload, beat),
        ),
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.commits.close();
    await this.consumer.disconnect();
  }

  private async handle(payload: EachBatchPayload, beat: BatchHeartbeat): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    const last = messages[messages.length - 1];
    if (!last) return;
    const log = this.options.log.child({ topic, partition });
    const events = await decode(messages);
    await retry(
      async () => {
        if (this.stopping || beat.failed || !payload.isRunning() || payload.isStale()) {
          throw new Stopping('consumer stopping or partition moving');
        }
        if (events.length > 0) await this.options.submit(events);
        await this.commits.handled(topic, partition, (BigInt(last.offset) + 1n).toString());
        payload.resolveOffset(last.offset);
      },
      {
        backoff: { initialMs: 200, maxMs: 5000 },
        retriable: (err) => !(err instanceof Stopping) && !this.stopping,
        onRetry: (err, attempt) => {
          log.warn({ err, attempt, firstOffset: messages[0]?.offset }, 'statement batch failed, retrying');
        },
      },
    );
  }
}

/** The batch's events that can restrict (SUBMITTED_EVENT_TYPES); the others, and messages that are not events (set aside by the fan-out), skipped. */
async function decode(messages: KafkaMessage[]): Promise<DomainEvent[]> {
  const events: DomainEvent[] = [];
  let decoded = 0;
  for (const message of messages) {
    const type = message.headers?.[HEADERS.eventType]?.toString();
    if (type !== undefined && !SUBMITTED_EVENT_TYPES.has(type)) continue;
    decoded += 1;
    if (decoded % DECODED_PER_TURN === 0) await yieldToLoop();
    let json: unknown;
    try {
      json = JSON.parse(message.value?.toString() ?? '');
    } catch {
      continue;
    }
    const parsed = DomainEvent.safeParse(json);
    if (parsed.success) events.push(parsed.data);
  }
  return events;
}
