import { z } from 'zod';
import { CidrList, EncryptionKeyList } from '@vigil/proto';
import { envBool as bool, envPort as port, envLoaders, serviceEnv } from '@vigil/proto/platform';
import { GrpcTarget } from './grpc/grpc-target';

const schema = z.object({
  ...serviceEnv,
  /** Public HTTP API port. 0 picks a free one (tests). Default 8080. */
  HTTP_PORT: port.default(8080),
  /** Address the HTTP API binds, e.g. 127.0.0.1 to keep it local. Unset: every interface, IPv4 and IPv6. */
  HTTP_HOST: z.string().min(1).optional(),
  /** Admin port for /livez, /readyz, /metrics. Default 9090. */
  ADMIN_PORT: port.default(9090),
  /**
   * Moderator gRPC target, `host:port` or `dns:///host:port`, resolved by DNS; calls go round robin to every address
   * it resolves to, skipping failed ones. Point it at the moderator's headless Service to use every pod. Required.
   */
  MODERATOR_ADDRESS: GrpcTarget,
  /** Token sent on every moderator call (`authorization: Bearer …`); the moderator's MODERATOR_GRPC_TOKEN. Required. */
  MODERATOR_GRPC_TOKEN: z.string().min(32, 'must be at least 32 characters'),
  /** Deadline of each Moderate call, milliseconds. Default 5000. */
  MODERATE_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  /** Largest accepted request body, bytes. Default 1 MiB. */
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  /**
   * Requests per API key per window, across all gateway replicas; a tenant's own limit (`tenant rate-limit`) replaces
   * it; 0: none. Default 360000, 6,000/s over 60 s: a client streaming ingests is not refused.
   */
  RATE_LIMIT_POINTS: z.coerce.number().int().min(0).default(360000),
  /** Rate limit window, seconds. Default 60. */
  RATE_LIMIT_WINDOW_S: z.coerce.number().int().min(1).max(86400).default(60),
  /**
   * How often each gateway writes its rate limit counts to the store and reads the other replicas', milliseconds; the
   * replicas together may admit what they receive in about two of these past a limit. A gateway that had no request
   * for 10 s exchanges once per 5 s until the next request. Default 250.
   */
  RATE_LIMIT_SYNC_MS: z.coerce.number().int().min(10).max(60000).default(250),
  /**
   * How often a gateway with no busy key exchanges its rate limit counts, milliseconds (the 5 s above; never more often
   * than RATE_LIMIT_SYNC_MS). Default 5000.
   */
  RATE_LIMIT_RELAXED_SYNC_MS: z.coerce.number().int().min(10).max(60000).default(5000),
  /**
   * How long a verified (or unknown) API key stays cached in memory, milliseconds. A configuration change answers
   * (and the admin CLI returns) this long after it is stored, so that it applies at once on every replica; every
   * gateway must use the same value. At most 1000. Default 1000.
   */
  API_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(1000).default(1000),
  /** Most API keys cached at once (oldest evicted first). Default 10000. */
  API_KEY_CACHE_MAX: z.coerce.number().int().min(1).default(10000),
  /** Deadline of every other moderator call (reads and decisions), milliseconds. Default 5000. */
  GRPC_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  /**
   * How long a moderator call waits for a connection when the gateway has none to any moderator, milliseconds; then
   * it is answered 503 unavailable instead of waiting out its deadline. Default 1000.
   */
  MODERATOR_CONNECT_WAIT_MS: z.coerce.number().int().min(0).max(60000).default(1000),
  /** Commands produced together in one Kafka request at most. Default 500. */
  KAFKA_BATCH_MAX: z.coerce.number().int().min(1).max(10000).default(500),
  /**
   * How long a command waits for others to share its Kafka request, milliseconds (0: next tick). While a request is in
   * flight, commands wait for its answer instead (at most 20 ms) and go together in the next. Default 2.
   */
  KAFKA_LINGER_MS: z.coerce.number().int().min(0).max(1000).default(2),
  /** Give up on a Kafka send (answer 503) after this many milliseconds. Default 10000. */
  KAFKA_SEND_TIMEOUT_MS: z.coerce.number().int().positive().default(10000),
  /** kafkajs connection timeout, milliseconds. Default 3000. */
  KAFKA_CONNECTION_TIMEOUT_MS: z.coerce.number().int().positive().default(3000),
  /** kafkajs request timeout, milliseconds. Default 10000. */
  KAFKA_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(10000),
  /** kafkajs retries of a failed request before the send fails (the idempotent producer needs at least 1). Default 3. */
  KAFKA_RETRIES: z.coerce.number().int().min(1).max(20).default(3),
  /** Partitions of the topics the gateway creates when missing (ingest, webhook commands). Default 6. */
  KAFKA_TOPIC_PARTITIONS: z.coerce.number().int().min(1).default(6),
  /**
   * CIDRs webhook URLs may resolve to although private or loopback, comma-separated; the notifier's variable of the same
   * name, so registration refuses what delivery would refuse. Never opens the metadata addresses. Default none.
   */
  WEBHOOK_ALLOWED_CIDRS: z.string().default('').pipe(CidrList),
  /** Webhook endpoints one tenant may register (every event fans out to each). Default 10. */
  WEBHOOK_MAX_ENDPOINTS_PER_TENANT: z.coerce.number().int().min(1).max(1000).default(10),
  /**
   * Whether rule sets may use `prompt` strategies (and prompt presets). Set true only when the moderator has
   * LLM_BASE_URL: without it they would never flag, so they are refused with 400 prompt_rules_disabled. Default false.
   */
  PROMPT_RULES_ENABLED: bool.default(false),
  /** Backtests of one tenant not finished at once; one more is refused with 409 backtest_running. Default 1. */
  BACKTEST_MAX_RUNNING: z.coerce.number().int().min(1).max(100).default(1),
  /**
   * Backtests one tenant may create per hour (a sliding hour, counted across replicas); one more is refused with 429
   * rate_limited and Retry-After. 0: no bound. Default 20.
   */
  BACKTEST_MAX_PER_HOUR: z.coerce.number().int().min(0).max(10_000).default(20),
  /** Records one backtest may judge at most; a larger `limit` is refused with 422 backtest_too_large. Default 100000. */
  BACKTEST_MAX_RECORDS: z.coerce.number().int().min(1).max(100_000).default(100_000),
  /** AI-provider calls one backtest may make at most (`ai.maxCalls`; 422 backtest_too_large above). Default 1000. */
  BACKTEST_MAX_AI_CALLS: z.coerce.number().int().min(1).max(10_000).default(1000),
  /** How long a backtest and its result are kept after it was created, seconds. Default 86400 (a day). */
  BACKTEST_RESULT_TTL_S: z.coerce.number().int().min(60).max(2_592_000).default(86400),
  /** Whether to trust X-Forwarded-* headers (behind an ingress). Default false. */
  TRUST_PROXY: bool.default(false),
  /** Console sessions end this long after sign-in, seconds. Default 28800 (8 hours). */
  CONSOLE_SESSION_TTL_S: z.coerce.number().int().min(60).max(604800).default(28800),
  /**
   * Failed console sign-ins in a row, of one member from one client address, that lock the member out from that
   * address (never from others) for CONSOLE_LOCKOUT_S. Default 5.
   */
  CONSOLE_LOCKOUT_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(5),
  /** How long an address stays locked out of a member after CONSOLE_LOCKOUT_ATTEMPTS failures, seconds. Default 900. */
  CONSOLE_LOCKOUT_S: z.coerce.number().int().min(1).max(86400).default(900),
  /** Console sign-in attempts per client address per minute (any email); 0 disables the limit. Default 20. */
  CONSOLE_SIGN_IN_PER_MINUTE: z.coerce.number().int().min(0).default(20),
  /**
   * Public base URL of this gateway, used to build absolute links handed to end users (`appealUrl`). Default
   * http://localhost:8080.
   */
  PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .default('http://localhost:8080')
    .transform((value) => value.replace(/\/+$/, '')),
  /**
   * Secret (at least 32 characters) that signs appeal links; rotating it invalidates every link handed out. Unset
   * turns appeal links and the public appeal page off.
   */
  APPEAL_TOKEN_SECRET: z.string().min(32).optional(),
  /** How long an appeal link stays valid after it was handed out, seconds. Default 2592000 (30 days). */
  APPEAL_TOKEN_TTL_S: z.coerce.number().int().min(60).max(31536000).default(2592000),
  /** Requests to the public appeal page per client address per minute; 0 disables the limit. Default 30. */
  APPEAL_PAGE_PER_MINUTE: z.coerce.number().int().min(0).default(30),
  /**
   * Encrypts tenants' payments keys and Transparency Database tokens at rest (AES-256-GCM): base64 of 32 random
   * bytes; to rotate, the new key first, old ones after, comma-separated. The notifier's too. Unset: storing a key is
   * 400 payments_not_configured, a token 400 secrets_not_configured.
   */
  SECRETS_ENCRYPTION_KEY: EncryptionKeyList.optional(),
});

export type Config = Readonly<z.infer<typeof schema>>;

/** The environment through `schema`: all of it (`loadConfig`), or the variables a CLI names (`loadConfigOf`). */
export const { loadConfig, loadConfigOf } = envLoaders(schema);
