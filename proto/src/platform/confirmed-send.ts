import {
  Partitioners,
  type ICustomPartitioner,
  type Message,
  type Producer,
  type ProducerRecord,
  type RecordMetadata,
} from 'kafkajs';

const PARTITION = Symbol('partition');
type Noted = Message & { [PARTITION]?: number };

/**
 * kafkajs's DefaultPartitioner (the same choice, so keys keep their partitions), noting on each message the partition
 * it chose, for `assertConfirmed`.
 */
export const notingPartitioner: ICustomPartitioner = () => {
  const choose = Partitioners.DefaultPartitioner();
  return (args) => {
    const partition = choose(args);
    (args.message as Noted)[PARTITION] = partition;
    return partition;
  };
};

/** A send that kafkajs reported as done although the broker confirmed none of some partition's messages. */
export class UnconfirmedSendError extends Error {
  readonly retriable = true;

  constructor(readonly partitions: string[]) {
    super(`kafka confirmed no write to ${partitions.join(', ')}`);
    this.name = 'UnconfirmedSendError';
  }
}

/**
 * Throws UnconfirmedSendError unless every message's partition (as `notingPartitioner` chose it) is in the broker's
 * answers; a message no noting partitioner saw (a producer made without it) cannot be checked and is passed. kafkajs 2.2 keeps, across the retries of one send, the answers of the brokers that answered: when a
 * partition's leader dies and the partition moves to a broker that already answered for its other partitions, the
 * retry sends nothing for it and the send resolves, its messages never written (seen under a broker SIGKILL). A send
 * that throws this is sent again, through a new producer (duplicates are dropped downstream by id).
 */
export function assertConfirmed(
  topicMessages: ReadonlyArray<{ topic: string; messages: Message[] }>,
  results: RecordMetadata[],
): void {
  const confirmed = new Set(results.map((result) => `${result.topicName}#${result.partition}`));
  const missing = new Set<string>();
  for (const { topic, messages } of topicMessages) {
    for (const message of messages) {
      const partition = (message as Noted)[PARTITION];
      if (partition !== undefined && !confirmed.has(`${topic}#${partition}`)) missing.add(`${topic}#${partition}`);
    }
  }
  if (missing.size > 0) throw new UnconfirmedSendError([...missing]);
}

/**
 * A producer whose sends go one at a time, are checked with `assertConfirmed`, and which is replaced after any failed
 * send: kafkajs rolls back the sequence numbers of every partition of a failed request, including the ones the broker
 * wrote, so the same producer's next send to those partitions would be refused or dropped as a duplicate. `create`
 * must make its producers with `notingPartitioner`, or the check passes every message.
 */
export class ConfirmedProducer {
  private producer?: Producer;
  private connecting?: Promise<Producer>;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly create: () => Producer) {}

  /** Connects a producer now (sends also connect one when none is). */
  async connect(): Promise<void> {
    await this.current();
  }

  /**
   * One send at a time: kafkajs's idempotent producer takes sequence numbers when it builds a request and gives them
   * back when it fails, so a second request in flight could be rebuilt with the sequences of a batch the broker wrote,
   * and be answered success while its messages are dropped as that batch's duplicate.
   */
  send(record: ProducerRecord): Promise<RecordMetadata[]> {
    const sending = this.tail.then(() => this.sendNow(record));
    this.tail = sending.catch(() => undefined);
    return sending;
  }

  private async sendNow(record: ProducerRecord): Promise<RecordMetadata[]> {
    const producer = await this.current();
    try {
      const results = await producer.send(record);
      assertConfirmed([{ topic: record.topic, messages: record.messages }], results);
      return results;
    } catch (err) {
      this.discard(producer);
      throw err;
    }
  }

  async disconnect(): Promise<void> {
    const producer = this.producer;
    this.producer = undefined;
    this.connecting = undefined;
    await producer?.disconnect();
  }

  private current(): Promise<Producer> {
    if (this.producer) return Promise.resolve(this.producer);
    this.connecting ??= (async () => {
      const producer = this.create();
      try {
        await producer.connect();
      } catch (err) {
        this.connecting = undefined;
        await producer.disconnect().catch(() => undefined);
        throw err;
      }
      this.producer = producer;
      this.connecting = undefined;
      return producer;
    })();
    return this.connecting;
  }

  private discard(producer: Producer): void {
    if (this.producer !== producer) return;
    this.producer = undefined;
    void producer.disconnect().catch(() => undefined);
  }
}
