import type { Topics } from '@vigil/proto';
import type { Kafka } from 'kafkajs';

/**
 * Creates the topics this service reads when missing (a no-op when the moderator or ops created them), so the
 * consumer can join before the first producer wrote.
 */
export async function ensureTopics(kafka: Kafka, topics: Topics, partitions: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = [topics.events, topics.webhookCommands].filter((topic) => !existing.has(topic));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({ topic, numPartitions: partitions })),
      });
    }
  } finally {
    await admin.disconnect();
  }
}
