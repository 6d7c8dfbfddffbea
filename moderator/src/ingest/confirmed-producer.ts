import { assertConfirmed } from '@vigil/proto/platform';
import type { Producer, ProducerRecord, RecordMetadata } from 'kafkajs';

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
