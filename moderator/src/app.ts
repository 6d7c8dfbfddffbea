import {
  ConfirmedProducer,
  ConsumerMetrics,
  addressPolicy,
  notingPartitioner,
  TenantVersions,
  topicNames,
} from '@vigil/proto';
import { connectStore, untilDone } from '@vigil/proto/platform';
import type { Kafka } from 'kafkajs';
import type { MongoClient } from 'mongodb';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from './config';
import {
  ActivityGate,
  createEngine,
  ImageFetcher,
  OffLoopPool,
  VerdictCache,
  workerFile,
  type ModerationEngine,
} from './engine';
import { startGrpcServer } from './grpc/server';
import { RulePrecision } from './precision/rule-precision';
import { splitRules } from './shadow/shadow-rules';
import { SHADOW_BOUNDS, ShadowRunner } from './shadow/shadow-runner';
import { thresholdOf } from './precision/precision-counts';
import { IngestCommandHandler } from './kafka/ingest-command-handler';
import { TransparencyCounter } from './transparency/transparency-counter';
import { IngestConsumer } from './kafka/ingest-consumer';
import { startBacktests } from './backtest/start-backtests';
import { createMetrics } from './metrics';
import { OutboxRelay } from './kafka/outbox-relay';
import { ContactErasure } from './store/contact-erasure';
import { ensureTopics } from './kafka/topics-setup';
import { ModerationUseCases } from './service/moderation-use-cases';
import { Queries } from './service/queries';
import { DeadLetterStore } from './store/dead-letter-store';
import { EventStore } from './store/event-store';
import { ReadModel } from './store/read-model';
import { KnownTenants } from './store/known-tenants';
import { TenantConfigCache } from './store/tenant-config';

/** The settings the moderator runs with, each from its variable in `config.ts` (where the defaults are). */
export type ModeratorConfig = Pick<
  Config,
  | 'GRPC_PORT'
  | 'GRPC_HOST'
  | 'GRPC_MAX_CONNECTION_AGE_MS'
  | 'MODERATOR_GRPC_TOKEN'
  | 'MONGO_DB'
  | 'KAFKA_TOPIC_PREFIX'
  | 'KAFKA_GROUP_ID'
  | 'KAFKA_SESSION_TIMEOUT_MS'
  | 'KAFKA_HEARTBEAT_INTERVAL_MS'
  | 'KAFKA_REBALANCE_TIMEOUT_MS'
  | 'KAFKA_COMMIT_INTERVAL_MS'
  | 'KAFKA_TOPIC_PARTITIONS'
  | 'INGEST_CONSUMER_ENABLED'
  | 'BACKTEST_CONSUMER_ENABLED'
  | 'BACKTEST_JOBS'
  | 'BACKTEST_RATE_PER_S'
  | 'BACKTEST_BUSY_RATE_PER_S'
  | 'RETROACTION_RATE_PER_S'
  | 'INGEST_CONCURRENCY'
  | 'INGEST_KEY_CONCURRENCY'
  | 'INGEST_RETRY_INITIAL_MS'
  | 'INGEST_RETRY_MAX_MS'
  | 'INGEST_MAX_UNEXPECTED_ATTEMPTS'
  | 'OUTBOX_POLL_MS'
  | 'OUTBOX_MIN_GAP_MS'
  | 'OUTBOX_BATCH_SIZE'
  | 'TENANT_CONFIG_TTL_MS'
  | 'KNOWN_TENANT_TTL_MS'
  | 'OPENAI_BASE_URL'
  | 'OPENAI_API_KEY'
  | 'OPENAI_MODERATION_MODEL'
  | 'OPENAI_TIMEOUT_MS'
  | 'LLM_BASE_URL'
  | 'LLM_API_KEY'
  | 'LLM_MODEL'
  | 'LLM_REVIEW_MODEL'
  | 'LLM_TIMEOUT_MS'
  | 'LLM_MAX_ATTEMPTS'
  | 'LLM_RETRY_INITIAL_MS'
  | 'LLM_TENANT_CONCURRENCY'
  | 'MODERATE_TENANT_CONCURRENCY'
  | 'MODERATE_QUEUE_PER_TENANT'
  | 'MODERATE_SHARED_WINDOW_MS'
  | 'MODERATE_HEAVY_YIELD_MS'
  | 'ENGINE_THREADS'
  | 'ENGINE_TENANT_THREADS'
  | 'ENGINE_RECORD_BUDGET_MS'
  | 'ENGINE_QUEUE_PER_TENANT'
  | 'ENGINE_RULE_CACHE_MB'
  | 'IMAGE_THREADS'
  | 'IMAGE_MODEL'
  | 'IMAGE_MAX_PER_RECORD'
  | 'IMAGE_MAX_BYTES'
  | 'IMAGE_FETCH_TIMEOUT_MS'
  | 'IMAGE_MAX_PIXELS'
  | 'IMAGE_VERDICT_CACHE_SIZE'
  | 'IMAGE_VERDICT_CACHE_TTL_S'
  | 'IMAGE_NICE'
  | 'IMAGE_SCHED_IDLE'
  | 'IMAGE_YIELD_MS'
  | 'ENGINE_NICE'
  | 'IMAGE_BUDGET_MS'
  | 'IMAGE_ALLOWED_CIDRS'
  | 'IMAGE_OCR'
  | 'IMAGE_OCR_BUDGET_MS'
>;

export interface ModeratorDeps {
  config: ModeratorConfig;
  log: Logger;
  /** Connected or not: the driver connects on first use. */
  mongo: MongoClient;
  kafka: Kafka;
  registry?: Registry;
  /** Defaults to the rule engine configured from `config`. */
  engine?: ModerationEngine;
  /** Whether the store answers now; defaults to a `ping` of the database (see IngestConsumerOptions.storeAnswers). */
  storeAnswers?: () => Promise<boolean>;
}

export interface Moderator {
  grpcPort: number;
  store: EventStore;
  service: ModerationUseCases;
  relay: OutboxRelay;
  deadLetters: DeadLetterStore;
  /** Dependencies answer: readiness. */
  ready(): Promise<boolean>;
  /** Shutdown phase 1: NOT_SERVING, gRPC server closed, consumer left the group. */
  stopIntake(): Promise<void>;
  /** Shutdown phase 2: outbox flushed, producer disconnected. */
  drain(): Promise<void>;
}

/** Builds and starts the moderator around the given clients (the composition root passes real ones, tests too). */
export async function createModerator(deps: ModeratorDeps): Promise<Moderator> {
  const { config, log, mongo, kafka } = deps;
  const topics = topicNames(config.KAFKA_TOPIC_PREFIX);
  const metrics = deps.registry ? createMetrics(deps.registry) : undefined;

  const db = mongo.db(config.MONGO_DB);
  // The tenants' configuration versions seen on calls and commands: fresh rules for each, stamped on every event.
  const versions = new TenantVersions();
  const store = new EventStore(db);
  await connectStore(log, mongo);
  await untilDone(log, 'event store indexes', () => store.ensureIndexes());
  const deadLetters = new DeadLetterStore(db);
  await untilDone(log, 'dead letter indexes', () => deadLetters.ensureIndexes());
  await untilDone(log, 'kafka topics', () => ensureTopics(kafka, topics, config.KAFKA_TOPIC_PARTITIONS));

  // The ingest consumer's dead letters; the relay makes producers of its own.
  // Its sends are checked against the broker's answers and a failed one replaces it (see ConfirmedProducer): a dead
  // letter dropped while a broker died would lose the command, since its offset is committed after the send.
  const producer = new ConfirmedProducer(() =>
    kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: notingPartitioner }),
  );
  await untilDone(log, 'kafka producer', () => producer.connect());

  const relay = new OutboxRelay({
    outbox: store.outbox,
    deadLetters,
    createProducer: () =>
      kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: notingPartitioner }),
    topic: topics.events,
    log: log.child({ component: 'outbox-relay' }),
    pollMs: config.OUTBOX_POLL_MS,
    minGapMs: config.OUTBOX_MIN_GAP_MS,
    batchSize: config.OUTBOX_BATCH_SIZE,
    onPublished: (count) => metrics?.published.inc(count),
    onDeadLetter: (reason) => metrics?.outboxDeadLetters.inc({ reason }),
  });
  const threads = config.ENGINE_THREADS;
  const pool = deps.engine
    ? undefined
    : new OffLoopPool({
        filename: workerFile('engine-worker'),
        threads,
        tenantThreads: config.ENGINE_TENANT_THREADS ?? Math.max(1, threads - 1),
        maxQueuedPerTenant: config.ENGINE_QUEUE_PER_TENANT,
        workerData: { ruleCacheBytes: config.ENGINE_RULE_CACHE_MB * 1024 * 1024 },
        niceIncrement: config.ENGINE_NICE,
        onTask: (name, seconds, outcome) => metrics?.offLoop.observe({ task: name, outcome }, seconds),
      });
  // Moderations of records without images in flight: image inference starts between them (IMAGE_YIELD_MS).
  const textActivity = new ActivityGate();
  // Image work has threads of its own (inference takes 60-500 ms an image), at a lower priority than the rest.
  const imageThreads = deps.engine ? 0 : config.IMAGE_THREADS;
  const imagePool =
    imageThreads > 0
      ? new OffLoopPool({
          filename: workerFile('image-worker'),
          threads: imageThreads,
          tenantThreads: Math.max(1, imageThreads - 1),
          maxQueuedPerTenant: config.ENGINE_QUEUE_PER_TENANT,
          workerData: { model: config.IMAGE_MODEL, schedIdle: config.IMAGE_SCHED_IDLE, ocr: config.IMAGE_OCR },
          niceIncrement: config.IMAGE_NICE,
          onTask: (name, seconds, outcome) => metrics?.offLoop.observe({ task: name, outcome }, seconds),
          yieldTo: { gate: textActivity, maxDelayMs: config.IMAGE_YIELD_MS },
        })
      : undefined;
  // Images are fetched for the bundled model and for the AI providers (which receive them as data URLs).
  const imageFetcher = deps.engine
    ? undefined
    : new ImageFetcher({ policy: addressPolicy(config.IMAGE_ALLOWED_CIDRS), maxBytes: config.IMAGE_MAX_BYTES });
  // One model load per thread: each `ready` task is a tenant of its own, so that each takes a thread.
  let modelsLoaded = false;
  const modelsReady = imagePool
    ? Promise.all(
        Array.from({ length: imageThreads }, (_, index) =>
          imagePool.run<{ scheduling: string }>(`ready-${index}`, 'ready', {}, { budgetMs: 10 * 60_000 }),
        ),
      ).then(
        (outcomes) => {
          modelsLoaded = true;
          const scheduling = outcomes.map((outcome) => (outcome.ok ? outcome.value.scheduling : 'unknown'));
          log.info({ threads: imageThreads, model: config.IMAGE_MODEL, scheduling }, 'image model loaded');
        },
        (err: unknown) => log.error({ err }, 'image model failed to load'),
      )
    : Promise.resolve().then(() => {
        modelsLoaded = true;
      });
  void modelsReady;
  const engine =
    deps.engine ??
    createEngine({
      checks: pool ? { pool, budgetMs: config.ENGINE_RECORD_BUDGET_MS } : undefined,
      images: imageFetcher
        ? {
            fetcher: imageFetcher,
            maxPerRecord: config.IMAGE_MAX_PER_RECORD,
            fetchTimeoutMs: config.IMAGE_FETCH_TIMEOUT_MS,
            model: imagePool
              ? {
                  pool: imagePool,
                  budgetMs: config.IMAGE_BUDGET_MS,
                  maxPixels: config.IMAGE_MAX_PIXELS,
                  cache:
                    config.IMAGE_VERDICT_CACHE_SIZE > 0
                      ? new VerdictCache({
                          max: config.IMAGE_VERDICT_CACHE_SIZE,
                          ttlMs: config.IMAGE_VERDICT_CACHE_TTL_S * 1000,
                        })
                      : undefined,
                }
              : undefined,
            onImage: (outcome) => metrics?.images.inc({ outcome }),
            // OCR (`image-text` strategies) runs in the image threads.
            ocr:
              imagePool && config.IMAGE_OCR
                ? { pool: imagePool, budgetMs: config.IMAGE_OCR_BUDGET_MS, maxPixels: config.IMAGE_MAX_PIXELS }
                : undefined,
            onText: (outcome) => metrics?.imageTexts.inc({ outcome }),
          }
        : undefined,
      provider: config.OPENAI_BASE_URL
        ? {
            baseUrl: config.OPENAI_BASE_URL,
            apiKey: config.OPENAI_API_KEY,
            model: config.OPENAI_MODERATION_MODEL,
            timeoutMs: config.OPENAI_TIMEOUT_MS,
          }
        : undefined,
      llm: config.LLM_BASE_URL
        ? {
            baseUrl: config.LLM_BASE_URL,
            apiKey: config.LLM_API_KEY,
            model: config.LLM_MODEL,
            reviewModel: config.LLM_REVIEW_MODEL,
            timeoutMs: config.LLM_TIMEOUT_MS,
            maxAttempts: config.LLM_MAX_ATTEMPTS,
            retryInitialMs: config.LLM_RETRY_INITIAL_MS,
            tenantConcurrency: config.LLM_TENANT_CONCURRENCY,
          }
        : undefined,
    });
  const tenantConfig = new TenantConfigCache(db, config.TENANT_CONFIG_TTL_MS, log, versions);
  const precision: RulePrecision = new RulePrecision({
    db,
    log: log.child({ component: 'rule-precision' }),
    thresholdOf: async (tenantId) => thresholdOf((await tenantConfig.get(tenantId)).settings),
    append: (events) => store.appendUnprojected(events),
    outbox: relay,
    registry: deps.registry,
    verdictOf: (recordId) => shadow.verdictOf(recordId),
    hasShadow: async (tenantId) => {
      const config = await tenantConfig.get(tenantId);
      return splitRules(config.rules).shadow !== null || config.shadowVersion !== undefined;
    },
  });
  const shadow: ShadowRunner = new ShadowRunner({
    engine,
    db,
    precision,
    log: log.child({ component: 'shadow-rules' }),
    registry: deps.registry,
    ...SHADOW_BOUNDS,
  });
  await untilDone(log, 'rule precision indexes', () => precision.ensureIndexes());
  const transparency = new TransparencyCounter(db, log.child({ component: 'transparency-counts' }), deps.registry);
  await untilDone(log, 'transparency count indexes', () => transparency.ensureIndexes());
  const service = new ModerationUseCases({
    store,
    engine,
    tenants: tenantConfig,
    log,
    versions,
    outbox: relay,
    afterCommit: async (events) => {
      await Promise.all([precision.count(events), transparency.count(events)]);
    },
    shadow,
    textActivity,
  });
  const queries = new Queries(store, new ReadModel(db));
  const tenants = new KnownTenants(db, config.KNOWN_TENANT_TTL_MS);

  const grpcServer = await startGrpcServer({
    config,
    service,
    queries,
    tenants,
    versions,
    log,
    metrics,
  });

  relay.start();
  const erasure = new ContactErasure({
    erase: (day) => store.eraseContactsOf(day),
    erasedThrough: () => store.contactsErasedThrough(),
    markErasedThrough: (day) => store.markContactsErasedThrough(day),
    oldestDue: () => store.oldestContactDue(),
    log: log.child({ component: 'contact-erasure' }),
  });
  erasure.start();
  const consumer = config.INGEST_CONSUMER_ENABLED
    ? new IngestConsumer({
        kafka,
        groupId: config.KAFKA_GROUP_ID,
        timing: {
          sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
          heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
          rebalanceTimeoutMs: config.KAFKA_REBALANCE_TIMEOUT_MS,
        },
        metrics: deps.registry ? new ConsumerMetrics(deps.registry, 'moderator_ingest_consumer') : undefined,
        commitIntervalMs: config.KAFKA_COMMIT_INTERVAL_MS,
        backpressure: relay,
        topics,
        handler: new IngestCommandHandler({ service, tenants, versions }),
        producer,
        log: log.child({ component: 'ingest' }),
        concurrency: config.INGEST_CONCURRENCY,
        keyConcurrency: config.INGEST_KEY_CONCURRENCY,
        retryInitialMs: config.INGEST_RETRY_INITIAL_MS,
        retryMaxMs: config.INGEST_RETRY_MAX_MS,
        maxUnexpectedAttempts: config.INGEST_MAX_UNEXPECTED_ATTEMPTS,
        // `ping` reaches the backend on MongoDB and FerretDB alike (FerretDB asks PostgreSQL for its status).
        storeAnswers: deps.storeAnswers ?? (async () => (await db.command({ ping: 1 })).ok === 1),
        onOutcome: (outcome) => metrics?.ingest.inc({ outcome }),
        onDeadLetter: (reason) => metrics?.ingestDeadLetters.inc({ reason }),
      })
    : undefined;
  if (consumer) await untilDone(log, 'ingest consumer', () => consumer.start());
  const backtests = await startBacktests({
    config,
    log,
    db,
    kafka,
    engine,
    liveActivity: textActivity,
    topics,
    versions,
    registry: deps.registry,
    service,
  });

  grpcServer.setServing(true);
  log.info('moderator ready');

  let intakeStopped = false;
  return {
    grpcPort: grpcServer.port,
    store,
    service,
    relay,
    deadLetters,
    async ready() {
      if (intakeStopped || !modelsLoaded) return false;
      await store.ping();
      return true;
    },
    async stopIntake() {
      intakeStopped = true;
      await grpcServer.close();
      await consumer?.stop();
      await backtests?.stop();
      await erasure.stop();
    },
    async drain() {
      // Shadow judgements in flight use the engine and write counters: done (within their budget) before either closes.
      await shadow.drain();
      await relay.stop({ flush: true });
      await producer.disconnect();
      await pool?.close();
      await imagePool?.close();
      await imageFetcher?.close();
    },
  };
}
