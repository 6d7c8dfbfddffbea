import type { Message, PartitionMetadata } from 'kafkajs';
import { notingPartitioner } from '../platform/confirmed-send';

// For specs: messages routed as kafkajs routes them, and the broker's answer for a partition.

export const partitionMetadata = Array.from({ length: 6 }, (_, partitionId) => ({
  partitionId,
  leader: 1,
})) as PartitionMetadata[];

export function routed(topic: string, keys: string[]): { messages: Message[]; partitions: number[] } {
  const partitioner = notingPartitioner();
  const messages = keys.map((key) => ({ key, value: 'v' }));
  const partitions = messages.map((message) => partitioner({ topic, partitionMetadata, message }));
  return { messages, partitions };
}

export const answer = (topicName: string, partition: number) => ({
  topicName,
  partition,
  errorCode: 0,
  baseOffset: '0',
});
