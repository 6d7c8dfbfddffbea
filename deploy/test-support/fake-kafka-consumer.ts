import type { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';

/**
 * A kafkajs client whose one consumer hands the test the batch handler `run` receives, and records the offsets
 * committed: the consumers' unit specs drive their handlers with it, with no broker.
 */
export function fakeKafka(topic: string) {
  const handler: { eachBatch?: (payload: EachBatchPayload) => Promise<void> } = {};
  const committed: { topic: string; partition: number; offset: string }[] = [];
  const consumer = {
    connect: () => Promise.resolve(),
    subscribe: () => Promise.resolve(),
    run: (config: { eachBatch: (payload: EachBatchPayload) => Promise<void> }) => {
      handler.eachBatch = config.eachBatch;
      return Promise.resolve();
    },
    commitOffsets: (offsets: typeof committed) => {
      committed.push(...offsets);
      return Promise.resolve();
    },
    disconnect: () => Promise.resolve(),
  };
  const kafka = { consumer: () => consumer } as unknown as Kafka;
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
  return { kafka, deliver, committed };
}
