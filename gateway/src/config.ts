import { z } from 'zod';

/** Booleans are spelled out; `z.coerce.boolean()` would read "false" as true. */
const bool = z.enum(['true', 'false']).transform((value) => value === 'true');
const port = z.coerce.number().int().min(0).max(65535);

const schema = z.object({
  /** pino level: trace, debug, info, warn, error, fatal. Default info. */
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /** Public HTTP API port. 0 picks a free one (tests). Default 8080. */
  HTTP_PORT: port.default(8080),
  /** Admin port for /livez, /readyz, /metrics. Default 9090. */
  ADMIN_PORT: port.default(9090),
  /** MongoDB connection string (any MongoDB-wire server). Required. */
  MONGO_URL: z.string().min(1),
  /** Database name. Default vigil. */
  MONGO_DB: z.string().min(1).default('vigil'),
  /** Comma-separated Kafka bootstrap brokers, e.g. `kafka-0:9092,kafka-1:9092`. Required. */
  KAFKA_BROKERS: z
    .string()
    .min(1)
    .transform((value) => value.split(',').map((broker) => broker.trim()).filter(Boolean)),
  /** Prefix for every topic name (shared clusters, tests). Default empty. */
  KAFKA_TOPIC_PREFIX: z.string().default(''),
  /** Moderator gRPC address, host:port. Required. */
  MODERATOR_ADDRESS: z.string().min(1),
  /** Deadline of each Moderate call, milliseconds. Default 5000. */
  MODERATE_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  /** Largest accepted request body, bytes. Default 1 MiB. */
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(1024 * 1024),
  /** Requests per API key per window; 0 disables rate limiting. Default 600. */
  RATE_LIMIT_POINTS: z.coerce.number().int().min(0).default(600),
  /** Rate limit window, seconds. Default 60. */
  RATE_LIMIT_WINDOW_S: z.coerce.number().int().positive().default(60),
  /** Whether to trust X-Forwarded-* headers (behind an ingress). Default false. */
  TRUST_PROXY: bool.default(false),
  /** Force-exit after this many milliseconds of shutdown. Default 20000. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(20000),
});

export type Config = Readonly<z.infer<typeof schema>>;

/** Parses the environment once; throws one error that lists every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  return Object.freeze(parsed.data);
}
