// The types of kafka.js, for the TypeScript tests and the scripts type-checked with JSDoc (tsconfig.deploy.json).
import type { ChildProcess } from 'node:child_process';

export const KAFKA_VERSION: string;
/** Resolves the Kafka jars into the cache (first run only); resolves to their folder. */
export function ensureKafkaJars(): Promise<string>;
export function kafkaClasspath(): string;

export interface LocalKafka {
  /** `127.0.0.1:<port>`. */
  brokers: string;
  port: number;
  pid: number | undefined;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** A single KRaft node; `dir` keeps its config, data and log (reuse it to restart with the same data). */
export function startKafka(options: {
  dir: string;
  port?: number;
  controllerPort?: number;
  heapMb?: number;
  detached?: boolean;
}): Promise<LocalKafka>;

export interface KafkaNode {
  /** The node id, 1 to the cluster's size. */
  readonly id: number;
  readonly port: number;
  /** `127.0.0.1:<port>`. */
  readonly broker: string;
  readonly dir: string;
  readonly pid: number | undefined;
  readonly process: ChildProcess | null;
  /** Starts the node on its ports and data (a no-op while it runs); resolves once it listens. */
  start(): Promise<void>;
  /** SIGKILLs the node; resolves once it has exited. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after 20 s. */
  stop(): Promise<void>;
}

export interface KafkaCluster {
  /** Every node's `127.0.0.1:<port>`, comma-separated. */
  brokers: string;
  nodes: KafkaNode[];
  /** Stops every node. */
  stop(): Promise<void>;
}

/**
 * `size` combined broker+controller nodes on this machine (default 3). Topics created without a replication factor
 * get `size` replicas; `min.insync.replicas` is `minInsync` (default size - 1).
 */
export function startKafkaCluster(options: {
  dir: string;
  size?: number;
  minInsync?: number;
  heapMb?: number;
  detached?: boolean;
}): Promise<KafkaCluster>;

/** How many brokers the cluster reached through `brokers` has registered (0 when it does not answer). */
export function registeredBrokers(brokers: string[]): Promise<number>;
