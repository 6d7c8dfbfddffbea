/** Creates Vigil's topics of `prefix` when missing (see topics.js); retries while the cluster's metadata settles. */
export function ensureTopics(options: {
  brokers: string;
  prefix?: string;
  partitions?: number;
  replicationFactor?: number;
  timeoutMs?: number;
}): Promise<void>;
