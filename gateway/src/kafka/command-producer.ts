import { assertConfirmed } from '@vigil/proto';
import type { Message, Producer, TopicMessages } from 'kafkajs';
import type { Logger } from 'pino';
import { UnavailableError } from '../errors';

export interface OutgoingCommand {
  topic: string;
  key: string;
  /** Command id: also the `event-id` header. */
  id: string;
  type: string;
  value: unknown;
}

/**
 * Bytes of command values sent in one Kafka request at most. kafkajs puts every message of one partition in one record
 * batch, and the broker refuses a batch above `message.max.bytes` (1 MB by default) as a whole: without this bound,
 * a few large records sent together would fail every command that shared their request. A single command is always
 * sent (its size is bounded by the record limits).
 */
export const BATCH_MAX_BYTES = 512 * 1024;

/**
 * While a request is in flight, commands that arrive wait for it to be answered (at most this long, ms) and then go
 * together in the next: under load a request carries what arrived during one round trip, not only during the linger,
 * and kafkajs's and the broker's work per request is shared by more commands.
 */
export const IN_FLIGHT_WAIT_MS = 20;

interface Pending {
  topic: string;
  message: Message;
  bytes: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface CommandProducerOptions {
  /** Commands per Kafka request at most. */
  batchMax: number;
  /** How long a command waits for others to join its request, ms (0: the next tick). */
  lingerMs: number;
  /** A send that has not settled by then fails the waiting requests, ms. */
  sendTimeoutMs: number;
}

/**
 * Produces commands and resolves each `send` only once Kafka acknowledged it (acks from every in-sync replica).
 * Concurrent sends are grouped into one `sendBatch` so throughput does not cost one round trip per request; a failed or
 * timed-out batch rejects each of its commands with `unavailable` (the client retries: nothing answered 2xx is lost).
 * The producer connects lazily and again after a failure, so Kafka coming back is picked up without a restart.
 *
 * After a failed send the next one goes through a new producer (a new producer id, sequences from 0). kafkajs rolls
 * back the sequence numbers of every partition of a failed request, those the broker wrote included; a later batch of
 * as many messages to such a partition would reuse a written batch's sequences, and the broker would take it for that
 * batch's retry: it would answer success and drop the new commands, which this would then answer 202.
 */
export class CommandProducer {
  private queue: Pending[] = [];
  private queuedBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private connecting: Promise<void> | undefined;
  private connected = false;
  private inFlight = new Set<Promise<void>>();

  private producer: Producer;

  constructor(
    private readonly createProducer: () => Producer,
    private readonly options: CommandProducerOptions,
    private readonly log: Logger,
  ) {
    this.producer = this.newProducer();
  }

  private newProducer(): Producer {
    const producer = this.createProducer();
    producer.on(producer.events.DISCONNECT, () => {
      if (producer === this.producer) this.connected = false;
    });
    return producer;
  }

  /** Replaces the producer after a failed send; the old one is disconnected in the background. */
  private replaceProducer(): void {
    const old = this.producer;
    this.producer = this.newProducer();
    this.connected = false;
    this.connecting = undefined;
    void old.disconnect().catch((err: unknown) => this.log.warn({ err }, 'kafka producer disconnect failed'));
  }

  get isConnected(): boolean {
    return this.connected;
  }

  connect(): Promise<void> {
    if (this.connected) return Promise.resolve();
    this.connecting ??= this.producer.connect().then(
      () => {
        this.connected = true;
        this.connecting = undefined;
        this.log.info('kafka producer connected');
      },
      (err: unknown) => {
        this.connecting = undefined;
        throw err;
      },
    );
    return this.connecting;
  }

  send(command: OutgoingCommand): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const value = JSON.stringify(command.value);
      const bytes = Buffer.byteLength(value) + Buffer.byteLength(command.key);
      if (this.queue.length > 0 && this.queuedBytes + bytes > BATCH_MAX_BYTES) this.flush();
      this.queue.push({
        topic: command.topic,
        message: {
          key: command.key,
          value,
          headers: { 'event-id': command.id, 'event-type': command.type },
        },
        bytes,
        resolve,
        reject,
      });
      this.queuedBytes += bytes;
      if (this.queue.length >= this.options.batchMax || this.queuedBytes >= BATCH_MAX_BYTES) this.flush();
      else {
        const wait =
          this.inFlight.size > 0 ? Math.max(this.options.lingerMs, IN_FLIGHT_WAIT_MS) : this.options.lingerMs;
        this.timer ??= setTimeout(() => this.flush(), wait);
      }
    });
  }

  /** Sends what is queued now; resolves when every batch sent so far has settled. */
  async drain(): Promise<void> {
    this.flush();
    await Promise.allSettled([...this.inFlight]);
  }

  async disconnect(): Promise<void> {
    await this.producer.disconnect();
    this.connected = false;
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    const sending = this.sendBatch(batch);
    this.inFlight.add(sending);
    void sending.finally(() => {
      this.inFlight.delete(sending);
      // What arrived meanwhile goes now, in one request.
      if (this.inFlight.size === 0) this.flush();
    });
  }

  private async sendBatch(batch: Pending[]): Promise<void> {
    const byTopic = new Map<string, Message[]>();
    for (const item of batch) {
      const list = byTopic.get(item.topic);
      if (list) list.push(item.message);
      else byTopic.set(item.topic, [item.message]);
    }
    const topicMessages: TopicMessages[] = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.connect()
          .then(() => this.producer.sendBatch({ topicMessages, acks: -1 }))
          // kafkajs can resolve a send whose moved partition it never wrote (see assertConfirmed): answered 503.
          .then((results) => assertConfirmed(topicMessages, results)),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('kafka send timed out')), this.options.sendTimeoutMs);
        }),
      ]);
      for (const item of batch) item.resolve();
    } catch (err) {
      this.log.warn({ err, commands: batch.length }, 'kafka send failed');
      this.replaceProducer();
      const failure = new UnavailableError('the command could not be stored, try again', undefined, { cause: err });
      for (const item of batch) item.reject(failure);
    } finally {
      clearTimeout(timer);
    }
  }
}
