import { HEADERS, type Topics } from '@vigil/proto';
import type { EachBatchPayload, IHeaders, Kafka, KafkaMessage, Producer } from 'kafkajs';
import type { Logger } from 'pino';
import { AppError } from '../domain/errors';
import {
  GroupConsumer,
  retry,
  sleep,
  type BatchHeartbeat,
  type ConsumerMetrics,
  type ConsumerTiming,
  type Gathering,
} from '@vigil/proto/platform';
import { isKafkaRetriable, messageRejection } from '../kafka/kafka-errors';

/** What became of one command: applied, or to dead-letter with its reason (a bounded kind, then details after `:`). */
export type Verdict = { kind: 'done' } | { kind: 'dead'; reason: string };

/** Applies one ingest command (IngestCommandHandler). Throws what is worth retrying. */
export interface IngestHandler {
  handle(message: KafkaMessage, log: Logger): Promise<Verdict>;
}

/**
 * Back-pressure: whether commands may be applied now (the outbox relay's room). Resolves true when they may, false
 * after `maxWaitMs` without room (the consumer heartbeats and asks again): commands wait in Kafka while the relay
 * catches up.
 */
export interface IngestBackpressure {
  room(maxWaitMs: number): Promise<boolean>;
}

export interface IngestConsumerOptions {
  kafka: Kafka;
  groupId: string;
  /** Session, heartbeat and rebalance timeouts of the group membership. */
  timing: ConsumerTiming;
  /** Lag, assignment, rebalances and liveness of the group membership, from kafkajs' events. */
  metrics?: ConsumerMetrics;
  topics: Topics;
  handler: IngestHandler;
  /** Used for dead letters: a ConfirmedProducer, so that no dead letter is dropped while a broker dies. */
  producer: Pick<Producer, 'send'>;
  log: Logger;
  /** Partitions worked at once. */
  concurrency: number;
  /**
   * Shortest time a batch is worked on, milliseconds (INGEST_GATHER_MS): a batch done sooner holds its fetch that long,
   * so that the commands arriving meanwhile come in the next fetch together and share their group commits. 0: none.
   */
  gatherMs?: number;
  /**
   * The commands of a fetch being moderated side by side: each attempt runs as a writer the group appends wait for
   * (see Gathering), so that they share one store write.
   */
  gathering?: Gathering;
  /**
   * Keys (records) of one partition's batch worked at once; the commands of one key stay in order. Default 8.
   */
  keyConcurrency?: number;
  retryInitialMs: number;
  retryMaxMs: number;
  /** Attempts for errors of unknown kind before the command is dead-lettered (known transient errors retry forever). */
  maxUnexpectedAttempts: number;
  /**
   * Whether the store answers now (a round trip to its backend). A command is dead-lettered for unexpected errors only
   * while the store answers: an outage whose errors the driver does not recognise must not cost accepted commands.
   * Default: always true.
   */
  storeAnswers?: () => Promise<boolean>;
  onOutcome?: (outcome: 'applied' | 'dead_letter' | 'retry') => void;
  backpressure?: IngestBackpressure;
  /** A command was dead-lettered; `reason` is from a bounded set (`invalid_command`, an error code, …). */
  onDeadLetter?: (reason: string) => void;
  /** Offsets of handled batches are committed together every this many milliseconds; 0 commits each batch. */
  commitIntervalMs?: number;
}

class Stopping extends Error {}

/**
 * Reads ingest commands, hands each to the handler (IngestCommandHandler), and commits. A partition's batch is split
 * by key: the commands of one key (one record) run in order, different keys side by side, so one record's store round
 * trips do not hold the others. The batch's offset is committed only after every command in it is stored (or was
 * dead-lettered), so a crash re-delivers them, and the streams' remembered command ids make the second delivery a
 * no-op. Transient failures (database down, provider failing, a conflict) are retried with backoff without committing;
 * a command that can never succeed goes to the dead-letter topic with its reason, and the partition moves on.
 */
export class IngestConsumer extends GroupConsumer {
  constructor(private readonly options: IngestConsumerOptions) {
    super({
      ...options,
      topics: [options.topics.ingest],
      // One moderation can outlast the session (a provider call, the engine's budget, retries of a transient
      // failure): heartbeats keep running while the batch is worked on, and a failed one stops it at the next command.
      handler: {
        commitIntervalMs: options.commitIntervalMs,
        eachBatch: (payload, beat) => this.handleBatch(payload, beat),
      },
    });
  }

  private async handleBatch(payload: EachBatchPayload, beat: BatchHeartbeat): Promise<void> {
    const started = Date.now();
    const { topic, partition, messages } = payload.batch;
    const last = messages[messages.length - 1];
    if (!last) return;
    const lanes = new Map<string, KafkaMessage[]>();
    for (const message of messages) {
      const key = message.key?.toString('latin1') ?? '';
      const lane = lanes.get(key);
      if (lane) lane.push(message);
      else lanes.set(key, [message]);
    }
    const waiting = [...lanes.values()];
    let interrupted = false;
    const work = async () => {
      for (let lane = waiting.shift(); lane; lane = waiting.shift()) {
        for (const message of lane) {
          // The partition went to another member, or may have (the group rebalances), or the consumer stops: what is
          // left is re-delivered to the partition's owner.
          if (interrupted || this.moving(payload, beat)) {
            interrupted = true;
            return;
          }
          await this.waitForRoom(payload);
          const log = this.options.log.child({ partition, offset: message.offset });
          const outcome = await this.settle({ topic, partition, message }, () => payload.heartbeat(), log);
          this.options.onOutcome?.(outcome);
          await payload.heartbeat();
        }
      }
    };
    const workers = Math.min(this.options.keyConcurrency ?? 8, waiting.length);
    const results = await Promise.allSettled(Array.from({ length: workers }, work));
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    if (interrupted) return;
    // Committed once, outside the retry loop (or with the other partitions' offsets within `commitIntervalMs`): a
    // failed commit (the group rebalanced, the partition moved) re-delivers the batch to the partition's owner, where
    // its command ids make it a no-op. Retrying the commit here would keep this handler, and so the whole consumer,
    // from rejoining.
    await this.handled(payload);
    // kafkajs fetches again once the fetch's batches are done: held until `gatherMs` is over, the next fetch brings
    // what arrived meanwhile in one batch, whose commands are moderated side by side and share their group commits.
    // Only a fetch that brought commands is held; an idle consumer's fetches wait on the broker as before.
    const left = started + (this.options.gatherMs ?? 0) - Date.now();
    if (left > 0 && !this.moving(payload, beat)) await sleep(left);
  }

  /** Waits while the outbox relay has no room, heartbeating each second so the group keeps the partition here. */
  private async waitForRoom(payload: EachBatchPayload): Promise<void> {
    const { backpressure } = this.options;
    if (!backpressure) return;
    while (!this.stopping && payload.isRunning() && !payload.isStale() && !(await backpressure.room(1000))) {
      await payload.heartbeat();
    }
  }

  /** Applies the command (or dead-letters it), retrying transient failures with backoff until one of them holds. */
  private async settle(
    source: Source,
    heartbeat: () => Promise<void>,
    log: Logger,
  ): Promise<'applied' | 'dead_letter'> {
    let unexpected = 0;
    // Known failures (AppError, kafkajs' retriable errors) retry without bound; the bound on unexpected ones ends in a
    // dead letter rather than a thrown error, so it is counted here. Only stopping ends the retries.
    return retry(
      async (attempt) => {
        if (this.stopping) throw new Stopping('consumer stopping');
        try {
          const { gathering, handler } = this.options;
          const handle = () => handler.handle(source.message, log);
          const verdict = await (gathering ? gathering.run(handle) : handle());
          if (verdict.kind === 'done') return 'applied';
          await this.deadLetter(source, verdict.reason, log);
          return 'dead_letter';
        } catch (err) {
          const known = err instanceof AppError || isKafkaRetriable(err);
          if (!known) unexpected += 1;
          if (!known && unexpected >= this.options.maxUnexpectedAttempts && !(await this.storeAnswers())) {
            // Not this command's fault: the store is down. Tried again, and judged again at the next failure.
            unexpected -= 1;
            log.warn({ err, attempt }, 'ingest command failed while the store does not answer, will retry');
            throw err;
          }
          if (!known && unexpected >= this.options.maxUnexpectedAttempts) {
            log.error({ err }, 'ingest command failed repeatedly, dead-lettering');
            try {
              await this.deadLetter(source, 'unexpected_error', log);
              return 'dead_letter';
            } catch (deadLetterErr) {
              log.warn({ err: deadLetterErr }, 'dead letter failed, will retry');
              throw deadLetterErr;
            }
          }
          log.warn({ err, attempt }, 'ingest command failed, will retry');
          throw err;
        }
      },
      {
        backoff: { initialMs: this.options.retryInitialMs, maxMs: this.options.retryMaxMs },
        retriable: (err) => !(err instanceof Stopping),
        onRetry: () => this.options.onOutcome?.('retry'),
        sleep: (ms) => this.sleepHeartbeating(ms, heartbeat),
      },
    );
  }

  private async storeAnswers(): Promise<boolean> {
    if (!this.options.storeAnswers) return true;
    return this.options.storeAnswers().catch(() => false);
  }

  /**
   * Sends the command to the dead-letter topic with its reason and where it was read. A command the ingest topic took
   * can still be refused there (a lower size limit, or the added headers tipping it over): then the dead letter goes
   * without key and value, only naming where the original is, so the partition still moves on and the operator still
   * sees it.
   */
  private async deadLetter({ topic, partition, message }: Source, reason: string, log: Logger): Promise<void> {
    const send = (key: Buffer | null, value: Buffer | null, headers: IHeaders) =>
      this.options.producer.send({
        topic: this.options.topics.ingestDeadLetter,
        acks: -1,
        messages: [{ key, value, headers }],
      });
    const source = `${topic}/${partition}/${message.offset}`;
    try {
      await send(message.key, message.value, {
        ...message.headers,
        [HEADERS.deadLetterReason]: reason,
        [HEADERS.deadLetterSource]: source,
      });
    } catch (err) {
      const rejection = messageRejection(err);
      if (!rejection) throw err;
      log.warn({ reason, rejection }, 'dead-letter topic refused the command, sending its coordinates instead');
      await send(null, null, {
        [HEADERS.deadLetterReason]: reason,
        [HEADERS.deadLetterSource]: source,
      });
    }
    log.warn({ reason }, 'ingest command dead-lettered');
    // `invalid_command: data.clientId` names the fields; the metric keeps the kind only.
    this.options.onDeadLetter?.(reason.split(':')[0] ?? reason);
  }

  /** Sleeps `ms` (cut short when stopping), heartbeating so the group keeps this partition here. */
  private async sleepHeartbeating(ms: number, heartbeat: () => Promise<void>): Promise<void> {
    const until = Date.now() + ms;
    while (Date.now() < until && !this.stopping) {
      await sleep(Math.min(1000, Math.max(0, until - Date.now())));
      // A failed heartbeat (the group is rebalancing, or Kafka is away) is thrown to kafkajs, which rejoins and
      // re-delivers the uncommitted message; swallowing it would keep a partition this member no longer owns.
      await heartbeat();
    }
  }
}

/** A message and where it was read. */
interface Source {
  topic: string;
  partition: number;
  message: KafkaMessage;
}
