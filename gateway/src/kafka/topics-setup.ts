import type { Kafka } from 'kafkajs';

/** Creates the topics the gateway produces to when missing (a no-op when ops created them already). */
export async function ensureTopics(kafka: Kafka, topics: string[], partitions: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((topic) => !existing.has(topic));
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
