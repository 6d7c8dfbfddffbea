import { DomainEvent, HEADERS, WebhookCommand, type Topics } from '@vigil/proto';
import type { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import {
  GroupConsumer,
  retry,
  runReactions,
  type Reaction,
  type BatchHeartbeat,
  type ConsumerMetrics,
  type ConsumerTiming,
} from '@vigil/proto/platform';
import type { DeadLetterStore, EventDeadLetter } from '../store/dead-letter-store';
import { ISOLATE_AFTER_ATTEMPTS, isRetriable } from '../store/store-errors';
import { markFirstRead } from './first-read';

/** What the consumer hands decoded webhook commands to (WebhookCommands). Idempotent. */
export interface WebhookCommandHandler {
  apply(command: WebhookCommand, log: Logger): Promise<void>;
}

export interface EventsConsumerOptions {
  kafka: Kafka;
  groupId: string;
  /** Session, heartbeat and rebalance timeouts of the group membership. */
  timing: ConsumerTiming;
  /** Lag, assignment, rebalances and liveness of the group membership, from kafkajs' events. */
  metrics?: ConsumerMetrics;
  topics: Topics;
  /**
   * What the features do with the batch's valid events (webhooks, user emails, payment actions), each handed the
   * events of the types it declares, all before the offsets are committed. They must be idempotent: a failure retries
   * the whole batch.
   */
  reactions: readonly Reaction<DomainEvent>[];
  commands: WebhookCommandHandler;
  deadLetters: DeadLetterStore;
  log: Logger;
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** A message was set aside; `reason` is from a bounded set. */
  onDeadLetter?: (reason: string) => void;
  /** Offsets of handled batches are committed together every this many milliseconds; 0 commits each batch. */
  commitIntervalMs?: number;
  /**
   * Writes the reactions hand over to finish after the batch (the webhooks' outcomes, OutcomeWriter): a batch of
   * events has its offset committed only once what was handed over until it was handled is written, and a stop writes
   * what waits (within its deadline) before the offsets are committed and the group is left.
   */
  writeBehind?: WriteBehind;
}

/** Writes handed over by the reactions and finished after their batch (see EventsConsumerOptions.writeBehind). */
export interface WriteBehind {
  /** Settles once everything handed over so far is written (undefined when it is); rejects if it never will be. */
  settled(): Promise<void> | undefined;
  /** Writes what waits now; settles once written, or given up at its deadline. */
  close(): Promise<void>;
}

class Stopping extends Error {}

/**
 * Decodes stored events and webhook commands, hands them to the features' reactions and to WebhookCommands, and
 * commits. Each message only writes to MongoDB (idempotent: deliveries have derived ids, commands are state resets), so a partition
 * is held only while MongoDB is unreachable, never by a webhook waiting for its retry or its first attempt (a fresh
 * webhook's delivery is stored after its batch, which the batch's commit waits for, see DeliveryIntake).
 */
export class EventsConsumer extends GroupConsumer {
  private readonly react: (events: DomainEvent[]) => Promise<void>;
  /** Joins to the group so far: each may have moved partitions between members. */
  private generation = 0;
  /**
   * Per partition, the offset below which its events may have been handled before (by this consumer before a
   * rejoin, or by the member that had it): the high watermark of its first batch after the last join.
   */
  private readonly rereadBelow = new Map<string, { generation: number; offset: bigint }>();

  constructor(private readonly options: EventsConsumerOptions) {
    super({
      ...options,
      topics: [options.topics.events, options.topics.webhookCommands],
      concurrency: 4,
      onJoin: () => {
        this.generation += 1;
      },
      // One attempt can outlast the session (a store that answers slowly, the projection wait): heartbeats keep
      // running while the batch is worked on, and a failed one ends the retries.
      handler: {
        commitIntervalMs: options.commitIntervalMs,
        eachBatch: (payload, beat) => this.handleBatch(payload, beat),
      },
    });
    this.react = runReactions(options.reactions);
  }

  /**
   * A batch is handled as a unit: its deliveries go in one insertMany (those stored with their first attempt's
   * outcome, with other batches' in the outcome writer's window), then one commit. Handling is idempotent, so a
   * failure retries the whole batch (and a crash re-delivers it) without duplicates. After a few failed attempts the
   * batch is handled one message at a time: a message that still fails for a reason of its own (a tenant's bad data,
   * not MongoDB being away) is set aside, so one tenant's failure never holds another's webhooks.
   */
  private async handleBatch(payload: EachBatchPayload, beat: BatchHeartbeat): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    const last = messages[messages.length - 1];
    if (!last) return;
    const log = this.options.log.child({ topic, partition });
    const { retryInitialMs = 200, retryMaxMs = 5000 } = this.options;
    const rereadBelow = this.rereadOffset(topic, partition, payload.batch.highWatermark);
    await retry(
      async (attempt) => {
        if (this.moving(payload, beat)) throw new Stopping('consumer stopping or partition moving');
        try {
          const isolate = attempt >= ISOLATE_AFTER_ATTEMPTS;
          if (topic === this.options.topics.webhookCommands) {
            for (const message of messages) {
              await this.isolated(isolate, topic, partition, message, log, () =>
                this.applyCommand(topic, partition, message, log),
              );
            }
          } else if (isolate) {
            for (const message of messages) {
              await this.isolated(true, topic, partition, message, log, () =>
                this.handleEvents(topic, partition, [message], false, log),
              );
            }
          } else {
            // A batch handled again may have had its webhooks sent and stored by the try before (another reaction
            // failed): only the first try marks events read for the first time.
            await this.handleEvents(topic, partition, messages, attempt === 0 && rereadBelow, log);
          }
          // A batch of events may have handed writes over (its webhooks went out, their outcomes are stored soon):
          // its offset waits for them, the partition's next batch does not.
          await this.handled(
            payload,
            topic === this.options.topics.events ? this.options.writeBehind?.settled() : undefined,
          );
        } catch (err) {
          if (this.stopping) throw new Stopping('consumer stopping');
          throw err;
        }
      },
      {
        // Every failure retries (the batch is idempotent) until the consumer stops; isolation bounds what one message
        // can hold.
        backoff: { initialMs: retryInitialMs, maxMs: retryMaxMs },
        retriable: (err) => !(err instanceof Stopping),
        // The batch heartbeat keeps the partition while MongoDB is away instead of triggering a rebalance.
        onRetry: (err, attempt) => {
          log.warn({ err, attempt, firstOffset: messages[0]?.offset }, 'batch handling failed, retrying');
        },
      },
    );
  }

  /** Writes what the reactions handed over (within its deadline) first, so that their batches' offsets are committed. */
  override async stop(): Promise<void> {
    const written = this.options.writeBehind?.close();
    await super.stop();
    await written;
  }

  /**
   * The offset below which the partition's events may have been handled before: the high watermark of the first
   * batch handled since this member last joined the group. Everything a previous owner (or this consumer, before it
   * committed) may have read was written by then.
   */
  private rereadOffset(topic: string, partition: number, highWatermark: string): bigint {
    const key = `${topic}/${partition}`;
    const known = this.rereadBelow.get(key);
    if (known && known.generation === this.generation) return known.offset;
    const mark = { generation: this.generation, offset: BigInt(highWatermark) };
    this.rereadBelow.set(key, mark);
    return mark.offset;
  }

  /** Runs `work` for one message; when isolating, a failure of its own sets the message aside instead of throwing. */
  private async isolated(
    isolate: boolean,
    topic: string,
    partition: number,
    message: KafkaMessage,
    log: Logger,
    work: () => Promise<void>,
  ): Promise<void> {
    try {
      await work();
    } catch (err) {
      if (!isolate || isRetriable(err)) throw err;
      log.error({ err, offset: message.offset }, 'message failed after retries');
      await this.setAside(topic, partition, message, 'processing_failed', log, err);
    }
  }

  /** Records the message in `event_dead_letters` (ids and reason only), counts it and logs it without content. */
  private async setAside(
    topic: string,
    partition: number,
    message: KafkaMessage,
    reason: string,
    log: Logger,
    err?: unknown,
  ): Promise<void> {
    const eventId = message.headers?.[HEADERS.eventId]?.toString();
    const parsed = safeJson(message.value?.toString() ?? '') as { tenantId?: unknown; type?: unknown } | undefined;
    const text = (value: unknown) => (typeof value === 'string' && value.length <= 200 ? value : undefined);
    const letter: EventDeadLetter = {
      _id: eventId ?? `${topic}/${partition}/${message.offset}`,
      eventId,
      tenantId: text(parsed?.tenantId),
      eventType: text(parsed?.type),
      topic,
      partition,
      offset: message.offset,
      reason,
      error: err instanceof Error ? err.name : undefined,
    };
    await this.options.deadLetters.setAside(letter);
    log.warn({ eventId, tenantId: letter.tenantId, offset: message.offset, reason }, 'message set aside');
    this.options.onDeadLetter?.(reason);
  }

  /**
   * Decodes the events, hands the valid ones to the reactions, then sets aside those that are not a known event (once the batch's other work held, so a batch retried for another reason records them once).
   * Events at or past `rereadBelow` and not republished are marked read for the first time (see `markFirstRead`);
   * none when it is false.
   */
  private async handleEvents(
    topic: string,
    partition: number,
    messages: KafkaMessage[],
    rereadBelow: bigint | false,
    log: Logger,
  ): Promise<void> {
    const invalid: KafkaMessage[] = [];
    const valid: DomainEvent[] = [];
    for (const message of messages) {
      const parsed = DomainEvent.safeParse(safeJson(message.value?.toString() ?? ''));
      if (parsed.success) {
        if (
          rereadBelow !== false &&
          BigInt(message.offset) >= rereadBelow &&
          // Set, whatever its value, on an event the moderator's outbox sweep published (maybe not the first time).
          message.headers?.[HEADERS.replayed] === undefined
        ) {
          markFirstRead(parsed.data);
        }
        valid.push(parsed.data);
        continue;
      }
      log.warn({ offset: message.offset, issues: parsed.error.issues.length }, 'event skipped: not a known event');
      invalid.push(message);
    }
    if (valid.length > 0) await this.react(valid);
    for (const message of invalid) await this.setAside(topic, partition, message, 'invalid_event', log);
  }

  private async applyCommand(topic: string, partition: number, message: KafkaMessage, log: Logger): Promise<void> {
    const parsed = WebhookCommand.safeParse(safeJson(message.value?.toString() ?? ''));
    if (!parsed.success) {
      log.warn({ issues: parsed.error.issues.length }, 'command skipped: invalid');
      await this.setAside(topic, partition, message, 'invalid_command', log);
      return;
    }
    await this.options.commands.apply(parsed.data, log);
  }
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}
