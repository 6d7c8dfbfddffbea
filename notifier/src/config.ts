import { CidrList, EncryptionKeyList } from '@vigil/proto';
import { z } from 'zod';
import { consumerEnv, envBool as bool, envPort as port, envLoaders, serviceEnv } from '@vigil/proto/platform';

const schema = z.object({
  ...serviceEnv,
  /** Admin port for /livez, /readyz, /metrics. Default 9092. */
  ADMIN_PORT: port.default(9092),
  /** Consumer group of the events consumer. Default vigil-notifier. */
  KAFKA_GROUP_ID: z.string().min(1).default('vigil-notifier'),
  ...consumerEnv,
  /** Retry delays after each failed attempt, comma-separated seconds. Default Standard Webhooks' schedule. */
  WEBHOOK_RETRY_SCHEDULE_S: z
    .string()
    .default('5,300,1800,7200,18000,36000,36000')
    .transform((value) => value.split(',').map((s) => Number(s.trim())))
    .refine((delays) => delays.every((d) => Number.isFinite(d) && d >= 0), 'must be comma-separated seconds'),
  /** Timeout of one delivery attempt, milliseconds. Default 15000. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(15000),
  /** CIDRs webhook URLs may resolve to although private or loopback, comma-separated. Default none. */
  WEBHOOK_ALLOWED_CIDRS: z.string().default('').pipe(CidrList),
  /** Upper bound on a receiver's `Retry-After`, seconds. Default 3600. */
  WEBHOOK_RETRY_AFTER_MAX_S: z.coerce.number().min(0).default(3600),
  /** An endpoint failing without a single success for this long is disabled, seconds. Default 5 days. */
  WEBHOOK_DISABLE_AFTER_S: z.coerce.number().positive().default(432000),
  /** Deliveries in flight in this process. Default 64. */
  DELIVERY_CONCURRENCY: z.coerce.number().int().positive().default(64),
  /**
   * Requests in flight per endpoint in this process, so one slow endpoint cannot take every slot. A slot is given
   * back when the endpoint answers, before the outcome is written. Default 16: one endpoint then takes about 16 ÷ its
   * response time webhooks a second (160/s at 100 ms).
   */
  DELIVERY_CONCURRENCY_PER_ENDPOINT: z.coerce.number().int().positive().default(16),
  /** Idle poll interval of the delivery scheduler, milliseconds (new work wakes it early). Default 500. */
  DELIVERY_POLL_MS: z.coerce.number().int().positive().default(500),
  /**
   * How long a fresh event's webhook, sent before its delivery is stored, is waited for, milliseconds. Answered within
   * it, the delivery is stored once with its outcome; otherwise it is stored leased and the outcome written when the
   * receiver answers (two writes). The batch does not wait: its offset is committed once the delivery is stored. An
   * endpoint that missed it is not waited for again until one of its attempts answers within it. 0 stores every
   * delivery before its first attempt. Default 500.
   */
  DELIVERY_FIRST_ATTEMPT_WAIT_MS: z.coerce.number().int().min(0).max(5000).default(500),
  /**
   * How long a delivery stored with its first attempt's outcome waits for others to share its insert, milliseconds
   * (at most 64 share one). Its webhook is out already: what waits is its batch's offset commit, and its row in the
   * delivery log, which appears up to this much later. 0 inserts each batch's deliveries before it is committed.
   * Default 200.
   */
  DELIVERY_WRITE_WINDOW_MS: z.coerce.number().int().min(0).max(5000).default(200),
  /**
   * How far ahead a down endpoint's due deliveries are parked while its circuit breaker is open, milliseconds. A few
   * stay as probes a minute apart, and the first probe answered brings them all back, so this is how often a backlog
   * that nothing answers is read and moved again, not how long a recovered endpoint waits. Default 3600000.
   */
  DELIVERY_BACKLOG_PARK_MS: z.coerce.number().int().min(60000).max(86400000).default(3600000),
  /** A claimed delivery's lease is the attempt timeout plus this, milliseconds; then another worker may take it. Default 15000. */
  DELIVERY_LEASE_MARGIN_MS: z.coerce.number().int().positive().default(15000),
  /**
   * Width of the time buckets in which deliveries, emails and payment actions wait for their due time, milliseconds:
   * a poll reads a bucket when it starts, so it reads work due within this much. Default 10000.
   */
  DUE_BUCKET_MS: z.coerce.number().int().min(100).max(3_600_000).default(10000),
  /**
   * How long after a bucket's end it is read once more for what is left (a crashed worker's leases, late writes),
   * milliseconds; a crashed worker's deliveries are retried this long (plus a bucket) after their lease. Default 30000.
   */
  DUE_GRACE_MS: z.coerce.number().int().min(0).max(3_600_000).default(30000),
  /**
   * How long the notifier trusts what it read of a webhook endpoint (URL, secrets, enabled, events), milliseconds,
   * when no event says it changed: events carry the tenant's configuration version, so a change made through the API
   * applies to the events of every request that follows it; this bounds the rest (a retry of an earlier delivery,
   * the notifier's own health state written by another replica). Default 5000.
   */
  ENDPOINT_CACHE_MS: z.coerce.number().int().min(0).max(600_000).default(5000),
  /** How long the payload waits for the moderator's projection to catch up with the event, milliseconds. Default 10000. */
  DELIVERY_PROJECTION_WAIT_MS: z.coerce.number().int().min(0).default(10000),
  /** Partitions of the topics this service creates when missing (webhook commands). Default 6. */
  KAFKA_TOPIC_PARTITIONS: z.coerce.number().int().min(1).default(6),
  /**
   * Whether the delivery log keeps the first KB of each receiver's response body. Off by default: the log is readable
   * through the API, so a body would let a tenant read whatever an allow-listed private address answers. Default false.
   */
  DELIVERY_LOG_RESPONSE_BODY: bool.default(false),
  /** Whether to run the delivery scheduler in this process. Default true. */
  DELIVERY_WORKER_ENABLED: bool.default(true),
  /**
   * SMTP relay for user emails, e.g. smtps://user:password@smtp.example.com:465 (smtp:// upgrades with STARTTLS when
   * the server offers it). Unset: this notifier sends no email; the ones it plans wait, pending, for a notifier with a
   * relay (see EMAIL_MAX_DELAY_S).
   */
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  /**
   * A user email that no notifier with SMTP_URL attempted this long after its status change is recorded as skipped
   * (`expired`) rather than sent late, seconds. Default 86400 (a day).
   */
  EMAIL_MAX_DELAY_S: z.coerce.number().int().min(60).max(2592000).default(86400),
  /** Sender of user emails, e.g. "Acme Trust & Safety <no-reply@acme.example>". Default no-reply@localhost. */
  EMAIL_FROM: z.string().min(3).max(320).default('no-reply@localhost'),
  /** Timeout of each SMTP step (connect, greeting, each reply), milliseconds. Default 30000. */
  EMAIL_TIMEOUT_MS: z.coerce.number().int().positive().default(30000),
  /** Retry delays after each failed email attempt, comma-separated seconds. Default 30 s up to 6 h (7 attempts). */
  EMAIL_RETRY_SCHEDULE_S: z
    .string()
    .default('30,300,1800,3600,10800,21600')
    .transform((value) => value.split(',').map((s) => Number(s.trim())))
    .refine((delays) => delays.every((d) => Number.isFinite(d) && d >= 0), 'must be comma-separated seconds'),
  /** Emails in flight in this process. Default 8. */
  EMAIL_CONCURRENCY: z.coerce.number().int().positive().default(8),
  /** Idle poll interval of the email loop, milliseconds (new messages wake it early). Default 1000. */
  EMAIL_POLL_MS: z.coerce.number().int().positive().default(1000),
  /**
   * The gateway's APPEAL_TOKEN_SECRET (same value): Suspended and Banned emails then carry an appeal link the gateway
   * accepts. Unset: appeals are off and emails carry no link.
   */
  APPEAL_TOKEN_SECRET: z.string().min(32).optional(),
  /** How long an emailed appeal link stays valid, seconds (as the gateway's APPEAL_TOKEN_TTL_S). Default 2592000. */
  APPEAL_TOKEN_TTL_S: z.coerce.number().int().min(60).max(31536000).default(2592000),
  /** The gateway's PUBLIC_URL: base of the emailed appeal links. Default http://localhost:8080. */
  GATEWAY_PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .default('http://localhost:8080')
    .transform((value) => value.replace(/\/+$/, '')),
  /**
   * The gateway's SECRETS_ENCRYPTION_KEY (same value): opens the payments keys tenants stored. Unset: payment actions
   * are recorded as skipped, `not_configured`.
   */
  SECRETS_ENCRYPTION_KEY: EncryptionKeyList.optional(),
  /** Base URL of Stripe's API (a local server in tests). Default https://api.stripe.com. */
  STRIPE_API_BASE_URL: z
    .url({ protocol: /^https?$/ })
    .default('https://api.stripe.com')
    .transform((value) => value.replace(/\/+$/, '')),
  /** Timeout of one Stripe call (connect, answer and body together), milliseconds. Default 20000. */
  PAYMENTS_TIMEOUT_MS: z.coerce.number().int().positive().default(20000),
  /** Retry delays after each failed payment action attempt, comma-separated seconds. Default 10 s up to 6 h (8 attempts). */
  PAYMENTS_RETRY_SCHEDULE_S: z
    .string()
    .default('10,60,300,1800,3600,10800,21600')
    .transform((value) => value.split(',').map((s) => Number(s.trim())))
    .refine((delays) => delays.every((d) => Number.isFinite(d) && d >= 0), 'must be comma-separated seconds'),
  /** Payment actions in flight in this process. Default 4. */
  PAYMENTS_CONCURRENCY: z.coerce.number().int().positive().default(4),
  /** Idle poll interval of the payment actions loop, milliseconds (new actions wake it early). Default 1000. */
  PAYMENTS_POLL_MS: z.coerce.number().int().positive().default(1000),
  /** Timeout of one Transparency Database call (connect, answer and body together), milliseconds. Default 30000. */
  TDB_TIMEOUT_MS: z.coerce.number().int().positive().default(30000),
  /**
   * Retry delays after each failed Transparency Database call, comma-separated seconds. Default 10 s up to 12 h, about
   * three days in all (13 attempts).
   */
  TDB_RETRY_SCHEDULE_S: z
    .string()
    .default('10,60,300,1800,3600,7200,21600,43200,43200,43200,43200,43200')
    .transform((value) => value.split(',').map((s) => Number(s.trim())))
    .refine((delays) => delays.every((d) => Number.isFinite(d) && d >= 0), 'must be comma-separated seconds'),
  /**
   * Transparency Database calls in flight per batch of events, and for retries (each carries up to 100 statements).
   * Default 2.
   */
  TDB_CONCURRENCY: z.coerce.number().int().positive().default(2),
  /** Idle poll interval of the Transparency Database retries, milliseconds. Default 1000. */
  TDB_POLL_MS: z.coerce.number().int().positive().default(1000),
  /**
   * How long the submission consumer's fetch waits for events to gather, so that a call carries many statements (the
   * database asks for batches), milliseconds; at most half of KAFKA_SESSION_TIMEOUT_MS is used. Default 2000.
   */
  TDB_BATCH_WAIT_MS: z.coerce.number().int().nonnegative().default(2000),
});

export type Config = Readonly<z.infer<typeof schema>>;

/** Parses the environment once; throws one error that lists every bad variable. */
export const { loadConfig } = envLoaders(schema);
