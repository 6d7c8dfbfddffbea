import type { Kafka } from 'kafkajs';
import { retry } from './retry';

/**
 * Creates the topics a service produces to or reads when missing (a no-op when ops or another service created them
 * already), so that a consumer can join before the first producer wrote. A topic just
 * created (here or by another process) can be missing from the broker's metadata for a moment, and kafkajs's wait for
 * its leaders gives up on that ("does not host this topic-partition"): retriable errors are tried again, a few times.
 */
export async function ensureTopics(kafka: Kafka, topics: string[], partitions: number): Promise<void> {
  await retry(
    async () => {
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
        await admin.fetchTopicMetadata({ topics });
      } finally {
        await admin.disconnect();
      }
    },
    {
      backoff: { initialMs: 200, maxMs: 2000 },
      maxAttempts: 8,
      retriable: (err) => (err as { retriable?: unknown }).retriable === true,
    },
  );
}
