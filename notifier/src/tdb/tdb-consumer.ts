import { DomainEvent, HEADERS } from '@vigil/proto';
import type { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Logger } from 'pino';
import {
  GroupConsumer,
  retry,
  type BatchHeartbeat,
  type ConsumerMetrics,
  type ConsumerTiming,
} from '@vigil/proto/platform';
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
export class TdbConsumer extends GroupConsumer {
  constructor(private readonly options: TdbConsumerOptions) {
    super({
      ...options,
      topics: [options.topic],
      // One partition's batch at a time: a fetch's calls and inserts come one after another, not all at once.
      concurrency: 1,
      fetch: {
        minBytes: FETCH_MIN_BYTES,
        // Longer than the heartbeat interval (the other consumers' fetch wait): a rebalance waits for this member's
        // fetch, at most half a session.
        maxWaitTimeInMs: Math.max(1, Math.min(options.batchWaitMs, Math.floor(options.timing.sessionTimeoutMs / 2))),
      },
      handler: { commitIntervalMs: options.commitIntervalMs, eachBatch: (payload, beat) => this.handle(payload, beat) },
    });
  }

  private async handle(payload: EachBatchPayload, beat: BatchHeartbeat): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    const last = messages[messages.length - 1];
    if (!last) return;
    const log = this.options.log.child({ topic, partition });
    const events = await decode(messages);
    await retry(
      async () => {
        if (this.moving(payload, beat)) throw new Stopping('consumer stopping or partition moving');
        if (events.length > 0) await this.options.submit(events);
        await this.handled(payload);
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
