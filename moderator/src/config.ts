import { availableParallelism } from 'node:os';
import { CidrList, EncryptionKeyList } from '@vigil/proto';
import { z } from 'zod';
import { consumerEnv, envBool as bool, envPort as port, envLoaders, serviceEnv } from '@vigil/proto/platform';

/** One engine thread per core the process may use, at most 4. */
const ENGINE_THREADS_DEFAULT = Math.min(4, availableParallelism());

const schema = z.object({
  ...serviceEnv,
  /** gRPC port of the ModerationService and grpc.health.v1. 0 picks a free one (tests). Default 50051. */
  GRPC_PORT: port.default(50051),
  /** Address the gRPC server binds. Default 0.0.0.0 (all interfaces, as in a container); 127.0.0.1 keeps it local. */
  GRPC_HOST: z.string().min(1).default('0.0.0.0'),
  /**
   * A client connection is closed (GOAWAY, calls in flight finish) after this long, milliseconds: a gateway balancing
   * over a headless Service then resolves the name again and spreads its calls over moderator pods started since.
   * Default 60000.
   */
  GRPC_MAX_CONNECTION_AGE_MS: z.coerce.number().int().min(1000).max(86_400_000).default(60000),
  /**
   * Shared token every ModerationService call must present as `authorization: Bearer <token>` (grpc.health.v1 stays
   * open). At least 32 characters, e.g. `openssl rand -hex 32`; the gateway's MODERATOR_GRPC_TOKEN. Required.
   */
  MODERATOR_GRPC_TOKEN: z.string().min(32, 'must be at least 32 characters'),
  /** Admin port for /livez, /readyz, /metrics. Default 9091. */
  ADMIN_PORT: port.default(9091),
  /** Consumer group of the ingest consumer. Default vigil-moderator. */
  KAFKA_GROUP_ID: z.string().min(1).default('vigil-moderator'),
  ...consumerEnv,
  /** Whether to consume ingest commands (false runs only the gRPC API). Default true. */
  INGEST_CONSUMER_ENABLED: bool.default(true),
  /** Whether to run backtests from the `backtests` topic (in a consumer group of their own). Default true. */
  BACKTEST_CONSUMER_ENABLED: bool.default(true),
  /** Backtests this process runs at once. Default 1. */
  BACKTEST_JOBS: z.coerce.number().int().min(1).max(16).default(1),
  /**
   * Records a backtest judges per second at most: it runs beside live moderation on the same threads and store.
   * Default 200.
   */
  BACKTEST_RATE_PER_S: z.coerce.number().int().min(1).max(100_000).default(200),
  /**
   * Records a backtest or retroaction goes through per second at most while this moderator serves live moderations
   * (any within the last second), so that live work keeps its latency; the lower of this and the job's full rate
   * (BACKTEST_RATE_PER_S, RETROACTION_RATE_PER_S) applies. Default 20.
   */
  BACKTEST_BUSY_RATE_PER_S: z.coerce.number().int().min(1).max(100_000).default(20),
  /**
   * Records a retroaction moderates per second at most (each may write events, webhooks and user changes): it runs
   * beside live moderation on the same threads and store. Default 50.
   */
  RETROACTION_RATE_PER_S: z.coerce.number().int().min(1).max(10_000).default(50),
  /**
   * How often the outbox relay looks for unpublished events when idle, milliseconds. Every append wakes the relay of
   * the instance that made it, so this only paces the pick-up of events a crashed instance left. Default 1000.
   */
  OUTBOX_POLL_MS: z.coerce.number().int().positive().default(1000),
  /**
   * Longest interval of the outbox sweep while it finds nothing, milliseconds: each empty sweep doubles the interval
   * from OUTBOX_POLL_MS up to this, and a wake-up or a sweep that publishes brings it back (this instance's own
   * appends are published from memory and do not). Bounds how long a crashed instance's events wait for another to
   * publish them. Default 8000.
   */
  OUTBOX_SWEEP_MAX_MS: z.coerce.number().int().positive().max(600_000).default(8000),
  /** Pause between back-to-back outbox batches under load, milliseconds (bigger batches, fewer scans). Default 10. */
  OUTBOX_MIN_GAP_MS: z.coerce.number().int().min(0).default(10),
  /** Events the outbox relay publishes per Kafka request (and a sweep gathers from the outbox at most). Default 100. */
  OUTBOX_BATCH_SIZE: z.coerce.number().int().min(1).max(10000).default(100),
  /**
   * A moderation's first attempt assumes its record is new and does not read it: one store read less per new record.
   * Only for a record without images whose tenant's rules judge in-process (blocklists, patterns, links, PII),
   * that this instance has not moderated in the last 50,000 to 100,000 records (about 2.8 MB of memory), and while at
   * most 20 % of the last 100 such records existed already. An existing record's append then conflicts, and the next
   * attempt reads it (the judgement is used again when what the engine saw is the same). So a record that another
   * instance made costs one wrong guess here, and its updates after that none; a restarted instance pays about 20
   * wrong guesses at most, in a row. With a user, a decision that would move the user's flagged count reads the record
   * first. Default true.
   */
  MODERATE_ASSUME_NEW: bool.default(true),
  /** Ingest partitions processed at once. Default 6 (the default partition count). */
  INGEST_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(6),
  /** Records of one ingest partition moderated at once; the commands of one record stay in order. Default 8. */
  INGEST_KEY_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  /**
   * Shortest time a fetch of ingest commands is worked on before the next fetch, milliseconds. Default 0 (none). With
   * 30, while commands flow, those that arrive meanwhile come in the next fetch together, are moderated side by side and
   * share their store writes (group commits): with one moderator, a record at 0.8 of the maximum rate costs about a
   * fifth less CPU, and its webhook about 15 ms more at the median; with two, the p99 of webhooks rose
   * (docs/performance.md). An idle consumer is never held: its fetches wait on the broker as before.
   */
  INGEST_GATHER_MS: z.coerce.number().int().min(0).max(500).default(0),
  /**
   * Longest wait of a group append of events for the other ingest commands of its fetch still being moderated,
   * milliseconds. The commands a fetch brought are judged side by side and finish at different times; each group
   * append waits for those still on their way (never for a time window: a command alone does not wait), so that
   * they share one insert. 0: no wait. Default 20.
   */
  INGEST_GROUP_WAIT_MS: z.coerce.number().int().min(0).max(1000).default(20),
  /** First retry delay of an ingest command that failed transiently, milliseconds; doubles per attempt. Default 200. */
  INGEST_RETRY_INITIAL_MS: z.coerce.number().int().positive().default(200),
  /** Longest retry delay of an ingest command, milliseconds. Default 30000. */
  INGEST_RETRY_MAX_MS: z.coerce.number().int().positive().default(30000),
  /** Attempts for an ingest command failing with an unexpected error before it is dead-lettered. Default 5. */
  INGEST_MAX_UNEXPECTED_ATTEMPTS: z.coerce.number().int().min(1).default(5),
  /** Partitions of the topics the moderator creates when they are missing. Default 6. */
  KAFKA_TOPIC_PARTITIONS: z.coerce.number().int().min(1).default(6),
  /**
   * How long tenant settings and rules are cached, milliseconds, when no call or command says they changed: gateways
   * stamp the tenant's configuration version on both, so a change applies at once to what follows it through the same
   * gateway, and within this otherwise. Counted from the read, or from the last call or command that confirmed the
   * version (docs/replicas.md). At most 1000, the bound the API promises. Default 1000.
   */
  TENANT_CONFIG_TTL_MS: z.coerce.number().int().min(0).max(1000).default(1000),
  /**
   * How long a tenant found in the `tenants` collection is remembered, milliseconds (a tenant not found is looked up
   * again on every call). Default 60000.
   */
  KNOWN_TENANT_TTL_MS: z.coerce.number().int().min(0).default(60000),
  /** Base URL of an OpenAI-compatible moderation API (e.g. https://api.openai.com). Unset disables it. */
  OPENAI_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** API key for OPENAI_BASE_URL. */
  OPENAI_API_KEY: z.string().optional(),
  /** Moderation model name. Default omni-moderation-latest. */
  OPENAI_MODERATION_MODEL: z.string().default('omni-moderation-latest'),
  /** Timeout of one provider call, milliseconds. Default 10000. */
  OPENAI_TIMEOUT_MS: z.coerce.number().int().positive().default(10000),
  /**
   * Base URL of an OpenAI-compatible chat completions API, version included (e.g. https://api.openai.com/v1): prompt
   * strategies call `<base>/chat/completions`. Unset: prompt strategies never flag (set the gateway's
   * PROMPT_RULES_ENABLED only with this).
   */
  LLM_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** API key for LLM_BASE_URL, sent as a bearer token. */
  LLM_API_KEY: z.string().optional(),
  /** Chat model that judges prompt strategies (it must support json_schema structured output). Default gpt-4o. */
  LLM_MODEL: z.string().min(1).default('gpt-4o'),
  /** Cheaper chat model for a second pass that drops a flag whose reasoning is uncertain. Unset: no second pass. */
  LLM_REVIEW_MODEL: z.string().min(1).optional(),
  /** Timeout of one chat completions call, milliseconds. Default 30000. */
  LLM_TIMEOUT_MS: z.coerce.number().int().positive().default(30000),
  /** Calls per judgement at most when the LLM fails transiently (429, 5xx, timeout), the first included. Default 3. */
  LLM_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(3),
  /** Delay before the first LLM retry, milliseconds; doubles per retry, with full jitter. Default 500. */
  LLM_RETRY_INITIAL_MS: z.coerce.number().int().positive().default(500),
  /**
   * Moderate calls one tenant may have in flight per moderator instance while another tenant has called within
   * MODERATE_SHARED_WINDOW_MS, in units: a call weighs one unit plus one per 8 KiB of text and metadata (a
   * 100,000-character record weighs 13, so it runs alone). Calls beyond wait in the tenant's queue until their
   * deadline, so one tenant's burst of large records waits behind itself instead of slowing every tenant's calls. A
   * tenant alone is not held back. Default 16.
   */
  MODERATE_TENANT_CONCURRENCY: z.coerce.number().int().min(1).max(4096).default(16),
  /** Moderate calls of one tenant waiting for MODERATE_TENANT_CONCURRENCY at most; more are refused as unavailable. Default 256. */
  MODERATE_QUEUE_PER_TENANT: z.coerce.number().int().min(1).max(100000).default(256),
  /**
   * How recently another tenant must have called the moderator for a tenant's Moderate calls to be held to
   * MODERATE_TENANT_CONCURRENCY, milliseconds: past it, a tenant alone is not held back. Default 1000.
   */
  MODERATE_SHARED_WINDOW_MS: z.coerce.number().int().min(1).max(60000).default(1000),
  /**
   * A Moderate call over 8 KiB of text and metadata, once its tenant's share lets it start, first waits at most this
   * long, milliseconds, for a moment when no other tenant has a call in flight on this moderator instance; 0 never
   * waits. A tenant streaming 100,000-character records then holds the CPU less of the time the others' requests
   * need it, at the cost of up to this much latency on its large records while others call. Default 100.
   */
  MODERATE_HEAVY_YIELD_MS: z.coerce.number().int().min(0).max(5000).default(100),
  /** LLM calls in flight per tenant at most, per moderator instance. Default 4. */
  LLM_TENANT_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /**
   * Worker threads that run the rule engine's local strategies (blocklists, patterns, links) off the main event loop;
   * each holds its own heap (about 10 MB idle) and compiled rule sets. Default: the available parallelism, at most 4.
   */
  ENGINE_THREADS: z.coerce.number().int().min(1).max(64).default(ENGINE_THREADS_DEFAULT),
  /**
   * Engine threads one tenant may hold at once; the others stay free for other tenants' records. Default: all but
   * one (at least one).
   */
  ENGINE_TENANT_THREADS: z.coerce.number().int().min(1).max(64).optional(),
  /**
   * Running time one record's local checks may take, milliseconds. A record whose checks take longer is Flagged for
   * review with a reason saying so, and the worker running them is replaced. Default 2000.
   */
  ENGINE_RECORD_BUDGET_MS: z.coerce.number().int().min(1).max(60000).default(2000),
  /**
   * Added to the nice value of the engine's threads (Linux; 0 to 19). A positive value lets request handling (this
   * process's event loop, the gateway, the store) run before the checks, so one tenant's heavy records slow the others'
   * requests less; but every record waits for its checks, so near saturation it lowers throughput and raises latency
   * for all (at 10, the ingest pipeline's p99 at 0.8× load rose from 0.5 to 0.9–2.2 s). Default 0.
   */
  ENGINE_NICE: z.coerce.number().int().min(0).max(19).default(0),
  /** Records of one tenant waiting for an engine thread at most; more are refused as unavailable. Default 256. */
  ENGINE_QUEUE_PER_TENANT: z.coerce.number().int().min(1).max(100000).default(256),
  /** Compiled rule sets each engine thread keeps, megabytes (estimated; least recently used dropped). Default 64. */
  ENGINE_RULE_CACHE_MB: z.coerce.number().int().min(1).max(4096).default(64),
  /**
   * Threads that judge record images with the bundled model (`images` strategies); each loads it at start (about
   * 145 MB of resident memory, 0.1 s; readiness waits). Default 0: images are not judged, `images` strategies never
   * flag.
   */
  IMAGE_THREADS: z.coerce.number().int().min(0).max(16).default(0),
  /** Bundled nsfwjs model: MobileNetV2 (3.5 MB), MobileNetV2Mid (5.7 MB) or InceptionV3 (30 MB). Default MobileNetV2Mid. */
  IMAGE_MODEL: z.enum(['MobileNetV2', 'MobileNetV2Mid', 'InceptionV3']).default('MobileNetV2Mid'),
  /** Images judged per record at most, chosen deterministically among its imageUrls. Default 3. */
  IMAGE_MAX_PER_RECORD: z.coerce.number().int().min(1).max(50).default(3),
  /** Bytes of one image at most (announced or read). Default 10485760 (10 MB). */
  IMAGE_MAX_BYTES: z.coerce.number().int().min(1024).default(10485760),
  /** Time for fetching all of a record's images, milliseconds. Default 5000. */
  IMAGE_FETCH_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  /** Decoded pixels of one image at most, read from its header before decoding (decompression bombs). Default 40000000. */
  IMAGE_MAX_PIXELS: z.coerce.number().int().positive().default(40000000),
  /**
   * Added to the nice value of the image threads (Linux; 0 to 19): image work takes only the CPU that text moderation
   * leaves. At 19 a text-only /moderate at half its maximum kept its p99 within 1.6-2.9× beside image load (4.8× at
   * 5); on a machine saturated by text for long, images then wait and may run out of IMAGE_BUDGET_MS. Under
   * IMAGE_SCHED_IDLE (the default) it applies only where that policy cannot be set. Default 19.
   */
  IMAGE_NICE: z.coerce.number().int().min(0).max(19).default(19),
  /**
   * Run the image threads and the OCR processes under Linux's SCHED_IDLE policy (set with util-linux's `chrt`, part
   * of every Debian image): they get only CPU time that no other thread of the machine wants, below every nice value.
   * A text-only /moderate at half its maximum had its p99 at 1.6-2.9× beside image load with nice 19 alone, 1.3-1.6×
   * under SCHED_IDLE in most runs; on a machine saturated for long, images then wait and may run out of
   * IMAGE_BUDGET_MS. `false` keeps IMAGE_NICE alone (nice 19 for the OCR processes). Default true.
   */
  IMAGE_SCHED_IDLE: bool.default(true),
  /**
   * Image inference yields to text: an image starts only at a moment when no moderation of a record without images
   * is running in this moderator, waiting at most this long for one (then it starts anyway), milliseconds; 0 starts
   * at once. Beside image load, a text-only /moderate at half its maximum kept its p99 at 0.86-1.51× its p99 alone
   * (1.64-2.23× without yielding); the image thread then judged about 9 images a second beside that text load, 16
   * without it. Under a steady stream of text each image waits up to this bound. Default 100.
   */
  IMAGE_YIELD_MS: z.coerce.number().int().min(0).max(5000).default(100),
  /**
   * Worker threads that hash images for the hash banks (MD5, SHA-256 and PDQ: about 20-60 ms of CPU a photo). Used
   * only for tenants with an enabled bank. Default 1.
   */
  HASH_THREADS: z.coerce.number().int().min(1).max(16).default(1),
  /** Running time of one image's decoding and hashing, milliseconds. Default 3000. */
  HASH_BUDGET_MS: z.coerce.number().int().positive().default(3000),
  /**
   * A tenant's hash bank index unused for this long is dropped from memory (and loaded again from the store on its
   * next image), milliseconds. Default 600000 (10 minutes).
   */
  HASH_BANK_IDLE_MS: z.coerce.number().int().positive().default(600000),
  /**
   * Stored records a retroactive hash pass compares with a bank's new hashes per second at most, per pass (a read of
   * about 200 bytes and a few index probes each). Default 2000.
   */
  HASH_RETRO_RATE_PER_S: z.coerce.number().int().min(1).max(1_000_000).default(2000),
  /**
   * The same while this moderator serves live moderations (any within the last second); the pass's flags are written at
   * the retroactions' rates (RETROACTION_RATE_PER_S, BACKTEST_BUSY_RATE_PER_S). Default 200.
   */
  HASH_RETRO_BUSY_RATE_PER_S: z.coerce.number().int().min(1).max(1_000_000).default(200),
  /**
   * A retroactive pass whose runner wrote no progress for this long is taken over by another moderator, milliseconds.
   * Default 30000.
   */
  HASH_RETRO_LEASE_MS: z.coerce.number().int().min(1000).max(3_600_000).default(30000),
  /**
   * How often an idle moderator looks for retroactive passes queued elsewhere (the admin CLI, another replica) or
   * left by a runner that died, milliseconds; a pass queued through this moderator starts at once. Half the lease: a
   * dead runner's pass is taken over within the lease and this. Default 15000.
   */
  HASH_RETRO_POLL_MS: z.coerce.number().int().min(100).max(600_000).default(15000),
  /** Running time of one image's decoding and classification, milliseconds. Default 5000. */
  IMAGE_BUDGET_MS: z.coerce.number().int().positive().default(5000),
  /**
   * Read the text in images for `image-text` strategies (OCR: tesseract.js and its English model from npm, offline),
   * in processes of their own (IMAGE_OCR_PROCESSES), all their threads under SCHED_IDLE (IMAGE_SCHED_IDLE; else nice
   * 19), so that reading takes no CPU time text moderation wants. Each loads the model at start (readiness waits) and
   * peaked at 290-405 MB of resident memory. Default false: `image-text` strategies read nothing.
   */
  IMAGE_OCR: bool.default(false),
  /**
   * OCR processes (IMAGE_OCR), each reading one image at a time; a tenant's waiting readings are bounded by
   * ENGINE_QUEUE_PER_TENANT. Default 1.
   */
  IMAGE_OCR_PROCESSES: z.coerce.number().int().min(1).max(16).default(1),
  /**
   * CPU time of one image's decoding and OCR in its OCR process (two readings, about 0.36 s), milliseconds; a reading
   * over it, or waiting 4 times as long for CPU time, ends its process, which starts again. Default 5000.
   */
  IMAGE_OCR_BUDGET_MS: z.coerce.number().int().positive().default(5000),
  /**
   * Text first: the OCR processes stop (SIGSTOP) while a moderation of a record without images runs in this moderator,
   * and go on (SIGCONT) when none has run for IMAGE_OCR_TEXT_FIRST_LINGER_MS, within the share cap below. Any busy work
   * on a 2-vCPU machine's other vCPU slows text moderation, whatever its priority. A record with images never pauses
   * OCR. Beside OCR load, text-only /moderate at half its maximum then kept its p99 at 0.56-1.06x its p99 alone
   * (0.71-1.53x without text first, in the same runs), but OCR read 0.1-0.2 images a second instead of 1.0-1.8, most
   * others a `timeout`. Linux and other systems with SIGSTOP; ignored on Windows. Default false.
   */
  IMAGE_OCR_TEXT_FIRST: bool.default(false),
  /**
   * How long OCR stays stopped after the last text-only moderation left (IMAGE_OCR_TEXT_FIRST), milliseconds: at half
   * the maximum rate, the next one often comes within it. Default 5.
   */
  IMAGE_OCR_TEXT_FIRST_LINGER_MS: z.coerce.number().int().min(0).max(1000).default(5),
  /**
   * The share cap of IMAGE_OCR_TEXT_FIRST: OCR is stopped for at most this long in each window of
   * IMAGE_OCR_TEXT_FIRST_WINDOW_MS, and reads for the rest of it, milliseconds; below the window. At half its maximum
   * rate text is in flight almost always, so OCR reads mostly in the rest of each window, beside text: with 500 text's
   * p99 was 1.22-2.07x its p99 alone, as without text first. Default 900.
   */
  IMAGE_OCR_TEXT_FIRST_MAX_PAUSED_MS: z.coerce.number().int().min(0).max(59_000).default(900),
  /** The share cap's window (IMAGE_OCR_TEXT_FIRST_MAX_PAUSED_MS), milliseconds. Default 1000. */
  IMAGE_OCR_TEXT_FIRST_WINDOW_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  /**
   * Verdicts of the image model kept in memory by the SHA-256 of the image's bytes, so that an image seen again (the
   * same picture on many records, a record judged again) is not decoded and classified again; 0 keeps none. Each
   * entry is a few hundred bytes. Default 10000.
   */
  IMAGE_VERDICT_CACHE_SIZE: z.coerce.number().int().min(0).max(1_000_000).default(10000),
  /** How long a cached image verdict is used, seconds. Default 3600. */
  IMAGE_VERDICT_CACHE_TTL_S: z.coerce.number().int().positive().default(3600),
  /**
   * CIDRs image URLs may resolve to although private or loopback, comma-separated (as WEBHOOK_ALLOWED_CIDRS for
   * webhooks; metadata addresses never). Default none.
   */
  IMAGE_ALLOWED_CIDRS: z.string().default('').pipe(CidrList),
  /**
   * CIDRs hash feed URLs may resolve to although private or loopback, comma-separated; plain http is taken only to an
   * IP literal inside them (local stand-ins in tests), https everywhere else. Metadata addresses never. Default none.
   */
  HASH_FEED_ALLOWED_CIDRS: z.string().default('').pipe(CidrList),
  /** How often a moderator reads the feeds due now, milliseconds. Default 15000. */
  HASH_FEED_POLL_MS: z.coerce.number().int().min(50).max(600_000).default(15000),
  /** One feed call's deadline (a file, a page of an exchange), milliseconds. Default 30000. */
  HASH_FEED_TIMEOUT_MS: z.coerce.number().int().positive().max(600_000).default(30000),
  /** Bytes of one feed answer at most (a hash file is at most 1,000,000 characters). Default 4194304 (4 MiB). */
  HASH_FEED_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .max(64 * 1024 * 1024)
    .default(4 * 1024 * 1024),
  /**
   * Delay after a failed feed run, milliseconds, doubling with each failure in a row up to the feed's interval (with
   * jitter); also the first delay of a failed feedback. Default 60000.
   */
  HASH_FEED_RETRY_MS: z.coerce.number().int().positive().max(3_600_000).default(60000),
  /**
   * Tenant secrets at rest (hash feed credentials), the gateway's and notifier's key list (same value): 32 random bytes
   * in base64 each, the sealing key first. Unset: a feed with credentials is refused (failed_precondition).
   */
  SECRETS_ENCRYPTION_KEY: EncryptionKeyList.optional(),
});

export type Config = Readonly<z.infer<typeof schema>>;

/** The environment through `schema`: all of it (`loadConfig`), or the variables a CLI names (`loadConfigOf`). */
export const { loadConfig, loadConfigOf } = envLoaders(schema);
