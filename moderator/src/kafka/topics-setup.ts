import type { Kafka } from 'kafkajs';
import type { Topics } from '@vigil/proto';

/** Creates the moderator's topics when missing (a no-op when they exist, e.g. created by ops with more settings). */
export async function ensureTopics(kafka: Kafka, topics: Topics, partitions: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = [topics.ingest, topics.ingestDeadLetter, topics.events, topics.backtests].filter(
      (topic) => !existing.has(topic),
    );
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
