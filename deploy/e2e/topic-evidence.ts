// What the topics hold of requests an end-to-end test found missing, for its failure message: whether their events
// reached the events topic, and where their ingest commands are (ingest topic, dead letters, the group's commits).
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { uniqueName, waitFor } from '../test-support';

/** Which of `ids` are on the topic (its `event-id` headers), read from the start to the high watermarks. */
export async function eventsOnTopic(brokers: string, topic: string, ids: Set<string>): Promise<string[]> {
  return readTopic(brokers, topic, (message) => {
    const id = message.headers?.['event-id']?.toString();
    return id && ids.has(id) ? id : undefined;
  });
}

/**
 * The ingest commands of these clientIds on the ingest and dead-letter topics (with partition and offset, and the
 * dead letter's reason), and the offsets the moderators' group (`groupId`) committed on the ingest topic.
 */
export async function commandsOnTopics(brokers: string, prefix: string, groupId: string, clientIds: Set<string>) {
  const ofClient = (message: KafkaMessage) => {
    const text = message.value?.toString() ?? '';
    const clientId = [...clientIds].find((id) => text.includes(`"${id}"`));
    if (!clientId) return undefined;
    const reason = message.headers?.['dead-letter-reason']?.toString();
    return reason ? `${clientId} (${reason})` : clientId;
  };
  const ingest = await readTopic(brokers, `${prefix}vigil.ingest.v1`, ofClient);
  const deadLetters = await readTopic(brokers, `${prefix}vigil.ingest.dlq.v1`, ofClient);
  const committed = await committedOffsets(brokers, groupId, `${prefix}vigil.ingest.v1`);
  return { ingest, deadLetters, committed };
}

/** The offsets consumer group `groupId` committed on `topic`, as `partition:offset`. */
export async function committedOffsets(brokers: string, groupId: string, topic: string): Promise<string[]> {
  const kafka = new Kafka({ clientId: 'evidence-check', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const committed = await admin.fetchOffsets({ groupId, topics: [topic] }).finally(() => admin.disconnect());
  return committed.flatMap((t) => t.partitions.map((p) => `${p.partition}:${p.offset}`));
}

/** What `match` names among the messages of a topic, read to its end, as `name@partition:offset`. */
export async function readTopic(
  brokers: string,
  topic: string,
  match: (message: KafkaMessage) => string | undefined,
): Promise<string[]> {
  const kafka = new Kafka({ clientId: 'evidence-check', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const left = new Map(ends.map((end) => [end.partition, BigInt(end.high)]));
  const found: string[] = [];
  const consumer = kafka.consumer({ groupId: uniqueName('evidence-check') });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: ({ partition, message }) => {
        const name = match(message);
        if (name) found.push(`${name}@${partition}:${message.offset}`);
        if (BigInt(message.offset) + 1n >= (left.get(partition) ?? 0n)) left.delete(partition);
        return Promise.resolve();
      },
    });
    for (const end of ends) if (BigInt(end.high) === 0n) left.delete(end.partition);
    await waitFor(() => left.size === 0, { timeoutMs: 60_000, what: `${topic} read to its end` });
  } finally {
    await consumer.disconnect();
  }
  return found;
}
