import type { ConsumerConfig, ConsumerRunConfig, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';

/**
 * A kafkajs client whose one consumer hands the test the batch handler `run` receives, and records the offsets
 * committed, the options it was made and run with, and its calls: the consumers' unit specs drive their handlers with
 * it, with no broker.
 */
export function fakeKafka(topic: string) {
  const handler: { eachBatch?: (payload: EachBatchPayload) => Promise<void> } = {};
  const committed: { topic: string; partition: number; offset: string }[] = [];
  const calls: string[] = [];
  const made: { config?: ConsumerConfig; run?: ConsumerRunConfig; subscribed?: unknown } = {};
  const listeners = new Map<string, (() => void)[]>();
  const consumer = {
    events: { GROUP_JOIN: 'consumer.group_join' },
    on: (event: string, listener: () => void) => {
      listeners.set(event, [...(listeners.get(event) ?? []), listener]);
      return () => {};
    },
    connect: () => {
      calls.push('connect');
      return Promise.resolve();
    },
    subscribe: (subscription: unknown) => {
      calls.push('subscribe');
      made.subscribed = subscription;
      return Promise.resolve();
    },
    run: (config: ConsumerRunConfig) => {
      calls.push('run');
      made.run = config;
      handler.eachBatch = config.eachBatch;
      return Promise.resolve();
    },
    commitOffsets: (offsets: typeof committed) => {
      calls.push('commit');
      committed.push(...offsets);
      return Promise.resolve();
    },
    disconnect: () => {
      calls.push('disconnect');
      return Promise.resolve();
    },
  };
  const kafka = {
    consumer: (config: ConsumerConfig) => {
      made.config = config;
      return consumer;
    },
  } as unknown as Kafka;
  /**
   * Hands `messages` to the consumer as one batch of partition 0 of `topic`, as kafkajs would; the partition's high
   * watermark is `highWatermark`, by default the offset after the batch's last message.
   */
  const deliver = async (messages: KafkaMessage[], highWatermark?: string) => {
    const last = messages[messages.length - 1];
    const payload = {
      batch: {
        topic,
        partition: 0,
        messages,
        highWatermark: highWatermark ?? (last ? String(BigInt(last.offset) + 1n) : '0'),
      },
      heartbeat: () => Promise.resolve(),
      resolveOffset: () => {},
      isRunning: () => true,
      isStale: () => false,
    } as unknown as EachBatchPayload;
    await handler.eachBatch!(payload);
  };
  /** The member (re)joined its group, as kafkajs tells after each rebalance. */
  const join = () => {
    for (const listener of listeners.get(consumer.events.GROUP_JOIN) ?? []) listener();
  };
  return { kafka, deliver, join, committed, calls, made };
}
