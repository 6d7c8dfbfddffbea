// The environment variables every service reads, spread into each service's config schema (`...serviceEnv`), and the
// ones every Kafka consumer reads (`...consumerEnv`). Each service declares the rest itself, its admin port included
// (each has its own default). deploy/tools/env-docs.js lists these with each service's own variables.
import { z } from 'zod';
import { BrokerList } from './service-addresses';
import { MongoUrl } from './env';

/** A boolean spelled out; `z.coerce.boolean()` would read "false" as true. */
export const envBool = z.enum(['true', 'false']).transform((value) => value === 'true');
/** A TCP port; 0 picks a free one (tests). */
export const envPort = z.coerce.number().int().min(0).max(65535);

export const serviceEnv = {
  /** pino level: trace, debug, info, warn, error, fatal or silent. Default info. */
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /** Address the admin server binds. Default 0.0.0.0; 127.0.0.1 keeps it local. */
  ADMIN_HOST: z.string().min(1).default('0.0.0.0'),
  /**
   * MongoDB connection string (any MongoDB-wire server), `mongodb://` or `mongodb+srv://`, checked by the driver at
   * start. Required.
   */
  MONGO_URL: MongoUrl,
  /** Database name. Default vigil. */
  MONGO_DB: z.string().min(1).default('vigil'),
  /** Comma-separated Kafka bootstrap brokers, each host:port, e.g. `kafka-0:9092,kafka-1:9092`. Required. */
  KAFKA_BROKERS: BrokerList,
  /** Prefix for every topic name (shared clusters, tests). Default empty. */
  KAFKA_TOPIC_PREFIX: z.string().default(''),
  /** Force-exit after this many milliseconds of shutdown. Default 20000. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(20000),
};

export const consumerEnv = {
  /**
   * Kafka consumer session timeout, milliseconds: how long a crashed replica keeps its partitions, and how long the
   * others stop in a rebalance that waits for it (kafkajs has no static membership). Brokers refuse values below their
   * group.min.session.timeout.ms (6000 by default). Why these three: @vigil/proto's consumer-timing.ts. Default 6000.
   */
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(1000).max(300000).default(6000),
  /**
   * How often the consumer heartbeats, milliseconds, and the longest a fetch waits for messages (an idle kafkajs
   * consumer heartbeats between fetches): a member learns of a rebalance within it. At most half the session timeout.
   * Default 1000.
   */
  KAFKA_HEARTBEAT_INTERVAL_MS: z.coerce.number().int().min(100).max(60000).default(1000),
  /**
   * How long a rebalance waits for a live member to finish its batch in flight and re-join, milliseconds; one still
   * busy after it is left out of that round and joins the next. Default 10000.
   */
  KAFKA_REBALANCE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(300000).default(10000),
  /**
   * Offsets of handled batches are committed together, one request every this many milliseconds (0: one per batch).
   * A crash re-delivers at most this much handled work, which ids make a no-op. Default 200.
   */
  KAFKA_COMMIT_INTERVAL_MS: z.coerce.number().int().min(0).max(10000).default(200),
};
