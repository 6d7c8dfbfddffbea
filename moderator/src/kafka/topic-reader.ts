import { ulid } from '@vigil/proto';
import type { Kafka, KafkaMessage } from 'kafkajs';

/** Offsets of one partition to read: from `from` (inclusive) to `until` (exclusive), at most `max` messages. */
export interface PartitionRange {
  partition: number;
  from: bigint;
  until: bigint;
  max: number;
}

export interface ReadMessage {
  partition: number;
  message: KafkaMessage;
}

/** The topic does not exist (a wrong `KAFKA_TOPIC_PREFIX`, or a moderator never started against this cluster). */
export class UnknownTopicError extends Error {}

function isUnknownTopic(err: unknown): boolean {
  for (let cause = err; cause instanceof Error; cause = cause.cause) {
    if ((cause as { type?: unknown }).type === 'UNKNOWN_TOPIC_OR_PARTITION') return true;
  }
  return false;
}

/**
 * Low (oldest retained) and high (next to be written) offsets of each partition of a topic; UnknownTopicError when
 * it does not exist.
 */
export async function partitionOffsets(
  kafka: Kafka,
  topic: string,
): Promise<Array<{ partition: number; low: bigint; high: bigint }>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic).catch((err: unknown) => {
      if (isUnknownTopic(err)) throw new UnknownTopicError(`the topic ${topic} does not exist`, { cause: err });
      throw err;
    });
    return offsets
      .map((entry) => ({ partition: entry.partition, low: BigInt(entry.low), high: BigInt(entry.high) }))
      .sort((a, b) => a.partition - b.partition);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Reads the given offset ranges of a topic, for an operator command. A consumer group is the only way kafkajs reads,
 * so it joins one of its own (`<groupPrefix>-<ulid>`), seeks to each range's start and commits nothing: nobody else's
 * position moves, and the next read sees the same messages. The group is deleted afterwards (best effort; the broker
 * forgets an empty group without offsets anyway). Rejects once `timeoutMs` passes without every range read.
 */
export async function readRanges(
  kafka: Kafka,
  topic: string,
  ranges: readonly PartitionRange[],
  { groupPrefix, timeoutMs }: { groupPrefix: string; timeoutMs: number },
): Promise<ReadMessage[]> {
  const wanted = new Map<number, PartitionRange>();
  for (const range of ranges) if (range.from < range.until && range.max > 0) wanted.set(range.partition, range);
  if (wanted.size === 0) return [];
  const read = new Map<number, KafkaMessage[]>();
  const pending = new Set(wanted.keys());
  const groupId = `${groupPrefix}-${ulid().toLowerCase()}`;
  const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false, maxWaitTimeInMs: 250 });
  let finish = () => {};
  const finished = new Promise<void>((resolve) => {
    finish = () => resolve();
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Kafka did not deliver ${topic}'s messages within ${Math.round(timeoutMs / 1000)} s`)),
      timeoutMs,
    );
  });
  // The deadline covers joining too; whatever is still under way when it passes is ended by the disconnect below.
  timedOut.catch(() => {});
  try {
    await Promise.race([
      (async () => {
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({
          autoCommit: false,
          eachBatch: (payload) => {
            const { batch } = payload;
            const range = wanted.get(batch.partition);
            if (!range || !pending.has(batch.partition)) {
              // Not asked for, or read already: fetched no more.
              payload.pause();
              return Promise.resolve();
            }
            const got = read.get(batch.partition) ?? [];
            read.set(batch.partition, got);
            for (const message of batch.messages) {
              const offset = BigInt(message.offset);
              // Fetched before the seek took effect.
              if (offset < range.from) continue;
              if (offset >= range.until || got.length >= range.max) break;
              got.push(message);
            }
            // Offsets may have gaps (compaction, transaction markers): the batch's last offset says how far it went.
            if (got.length >= range.max || BigInt(batch.lastOffset()) + 1n >= range.until) {
              pending.delete(batch.partition);
              if (pending.size === 0) finish();
            }
            return Promise.resolve();
          },
        });
        for (const range of wanted.values()) {
          consumer.seek({ topic, partition: range.partition, offset: range.from.toString() });
        }
        await finished;
      })(),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
    await deleteGroup(kafka, groupId);
  }
  return [...wanted.keys()].flatMap((partition) =>
    (read.get(partition) ?? []).map((message) => ({ partition, message })),
  );
}

async function deleteGroup(kafka: Kafka, groupId: string): Promise<void> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.deleteGroups([groupId]);
  } catch {
    // Left to the broker, which drops an empty group without offsets.
  } finally {
    await admin.disconnect().catch(() => {});
  }
}
