import { assertConfirmed, notingPartitioner } from '@vigil/proto/platform';
import type { Kafka, Message, Producer, TopicMessages } from 'kafkajs';
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
 * and kafkajs's and the broker's work per request is shared by more commands. Past this wait they go through another
 * producer (see MAX_PRODUCERS).
 */
export const IN_FLIGHT_WAIT_MS = 20;

/**
 * Producers at most, each with at most one request in flight. kafkajs's idempotent producer takes a partition's
 * sequence numbers when it builds a request and gives them back when the request fails. A second request in flight
 * on the same producer can then be built again, on its retry, with the sequences of a batch the broker wrote; the
 * broker takes it for that batch's retry, answers success, and drops its commands (seen when a broker was SIGKILLed).
 * A request slower than IN_FLIGHT_WAIT_MS therefore holds its producer only, and the commands behind it go through
 * another.
 */
export const MAX_PRODUCERS = 4;

interface Pending {
  topic: string;
  message: Message;
  bytes: number;
  /** When it was queued (ms): one that waited a whole send timeout for a producer is answered 503. */
  queuedAt: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** One producer and whether its one request is in flight. */
interface Lane {
  producer: Producer;
  busy: boolean;
  connected: boolean;
  connecting?: Promise<void>;
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
 * The producers a CommandProducer makes over `kafka`: idempotent, one request in flight (see CommandProducer), never
 * creating a topic, and noting the partition of each key.
 */
export const commandProducers = (kafka: Kafka) => (): Producer =>
  kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: notingPartitioner,
  });

/**
 * Produces commands and resolves each `send` only once Kafka acknowledged it (acks from every in-sync replica).
 * Concurrent sends are grouped into one `sendBatch` so throughput does not cost one round trip per request; a failed or
 * timed-out batch rejects each of its commands with `unavailable` (the client retries: nothing answered 2xx is lost).
 * Producers connect lazily and again after a failure, so Kafka coming back is picked up without a restart.
 *
 * Each producer has at most one request in flight (see MAX_PRODUCERS). After a failed send its next one goes through a
 * new producer (a new producer id, sequences from 0): kafkajs rolls back the sequence numbers of every partition of a
 * failed request, those the broker wrote included, and a later batch of as many messages to such a partition would
 * reuse a written batch's sequences; the broker would take it for that batch's retry, answer success and drop the new
 * commands, which this would then answer 202.
 */
export class CommandProducer {
  private queue: Pending[] = [];
  private queuedBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly lanes: Lane[] = [];
  private inFlight = new Set<Promise<void>>();

  constructor(
    private readonly createProducer: () => Producer,
    private readonly options: CommandProducerOptions,
    private readonly log: Logger,
  ) {
    this.lanes.push(this.newLane());
  }

  private newLane(): Lane {
    const lane = { busy: false, connected: false } as Lane;
    lane.producer = this.makeProducer(lane);
    return lane;
  }

  private makeProducer(lane: Lane): Producer {
    const producer = this.createProducer();
    producer.on(producer.events.DISCONNECT, () => {
      if (lane.producer === producer) lane.connected = false;
    });
    return producer;
  }

  /** Replaces a lane's producer after a failed send; the old one is disconnected in the background. */
  private replaceProducer(lane: Lane): void {
    const old = lane.producer;
    lane.producer = this.makeProducer(lane);
    lane.connected = false;
    lane.connecting = undefined;
    void old.disconnect().catch((err: unknown) => this.log.warn({ err }, 'kafka producer disconnect failed'));
  }

  /** Whether the first producer is connected (readiness: the others are made only while it is slow). */
  get isConnected(): boolean {
    return this.lanes[0]!.connected;
  }

  connect(): Promise<void> {
    return this.connectLane(this.lanes[0]!);
  }

  private connectLane(lane: Lane): Promise<void> {
    if (lane.connected) return Promise.resolve();
    const producer = lane.producer;
    lane.connecting ??= producer.connect().then(
      () => {
        if (lane.producer !== producer) return;
        lane.connected = true;
        lane.connecting = undefined;
        this.log.info('kafka producer connected');
      },
      (err: unknown) => {
        if (lane.producer === producer) lane.connecting = undefined;
        throw err;
      },
    );
    return lane.connecting;
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
        queuedAt: Date.now(),
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
    while (this.inFlight.size > 0) {
      await Promise.allSettled([...this.inFlight]);
    }
  }

  async disconnect(): Promise<void> {
    await Promise.all(this.lanes.map((lane) => lane.producer.disconnect()));
    for (const lane of this.lanes) lane.connected = false;
  }

  /**
   * Sends what is queued, a request's worth at a time, on producers with nothing in flight (made up to MAX_PRODUCERS);
   * what is left waits for one. Commands that waited a whole send timeout for a producer are answered 503.
   */
  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.expire();
    while (this.queue.length > 0) {
      let lane = this.lanes.find((candidate) => !candidate.busy);
      if (!lane && this.lanes.length < MAX_PRODUCERS) {
        lane = this.newLane();
        this.lanes.push(lane);
      }
      if (!lane) return;
      const batch = this.take();
      lane.busy = true;
      const sending = this.sendBatch(lane, batch);
      this.inFlight.add(sending);
      const held = lane;
      void sending.finally(() => {
        held.busy = false;
        this.inFlight.delete(sending);
        // What arrived meanwhile goes now, in one request.
        this.flush();
      });
    }
  }

  /** The queue's head, up to batchMax commands and BATCH_MAX_BYTES (one command at least). */
  private take(): Pending[] {
    let bytes = 0;
    let count = 0;
    for (const item of this.queue) {
      if (count >= this.options.batchMax || (count > 0 && bytes + item.bytes > BATCH_MAX_BYTES)) break;
      bytes += item.bytes;
      count += 1;
    }
    const batch = this.queue.splice(0, count);
    this.queuedBytes -= bytes;
    return batch;
  }

  private expire(): void {
    const limit = Date.now() - this.options.sendTimeoutMs;
    if (!this.queue.some((item) => item.queuedAt <= limit)) return;
    const failure = new UnavailableError('the command could not be stored, try again');
    const kept: Pending[] = [];
    for (const item of this.queue) {
      if (item.queuedAt <= limit) {
        this.queuedBytes -= item.bytes;
        item.reject(failure);
      } else kept.push(item);
    }
    this.log.warn({ commands: this.queue.length - kept.length }, 'kafka producers busy past the send timeout');
    this.queue = kept;
  }

  private async sendBatch(lane: Lane, batch: Pending[]): Promise<void> {
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
        this.connectLane(lane)
          .then(() => lane.producer.sendBatch({ topicMessages, acks: -1 }))
          // kafkajs can resolve a send whose moved partition it never wrote (see assertConfirmed): answered 503.
          .then((results) => assertConfirmed(topicMessages, results)),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('kafka send timed out')), this.options.sendTimeoutMs);
        }),
      ]);
      for (const item of batch) item.resolve();
    } catch (err) {
      this.log.warn({ err, commands: batch.length }, 'kafka send failed');
      this.replaceProducer(lane);
      const failure = new UnavailableError('the command could not be stored, try again', undefined, { cause: err });
      for (const item of batch) item.reject(failure);
    } finally {
      clearTimeout(timer);
    }
  }
}
