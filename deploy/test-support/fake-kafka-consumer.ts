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
  const consumer = {
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
  /** Hands `messages` to the consumer as one batch of partition 0 of `topic`, as kafkajs would. */
  const deliver = async (messages: KafkaMessage[]) => {
    const payload = {
      batch: { topic, partition: 0, messages },
      heartbeat: () => Promise.resolve(),
      resolveOffset: () => {},
      isRunning: () => true,
      isStale: () => false,
    } as unknown as EachBatchPayload;
    await handler.eachBatch!(payload);
  };
  return { kafka, deliver, committed, calls, made };
}
