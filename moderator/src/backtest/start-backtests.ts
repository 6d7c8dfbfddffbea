import type { TenantVersions, Topics } from '@vigil/proto';
import type { Db } from 'mongodb';
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Config } from '../config';
import type { ActivityGate, ModerationEngine } from '../engine';
import { untilDone } from '@vigil/proto/platform';
import { TenantConfigCache } from '../store/tenant-config';
import { BacktestConsumer } from './backtest-consumer';
import { BacktestRunner } from './backtest-runner';
import { BacktestStore } from './backtest-store';
import { RetroactionRunner } from './retroaction-runner';
import { RetroactionStore } from './retroaction-store';
import type { ModerationUseCases } from '../service/moderation-use-cases';

/** Records judged at once by one job, and between two progress writes. */
const RECORD_CONCURRENCY = 4;
const BATCH_SIZE = 100;
/** How long after the last live moderation a job keeps its background rate. */
const LIVE_QUIET_MS = 1000;
/** Records a retroaction moderates at once, and between two progress writes (where a resumed run starts). */
const RETRO_CONCURRENCY = 2;
const RETRO_BATCH_SIZE = 20;

/**
 * Backtests run in the moderator, the home of the engine and the only reader of records' content, fed by the
 * `backtests` topic: a job survives its runner (Kafka hands its message to the next one), and several moderators
 * share the jobs by partition. Undefined when BACKTEST_CONSUMER_ENABLED is false.
 */
export async function startBacktests(deps: {
  config: Pick<
    Config,
    | 'BACKTEST_CONSUMER_ENABLED'
    | 'BACKTEST_JOBS'
    | 'BACKTEST_RATE_PER_S'
    | 'BACKTEST_BUSY_RATE_PER_S'
    | 'RETROACTION_RATE_PER_S'
    | 'KAFKA_GROUP_ID'
    | 'KAFKA_SESSION_TIMEOUT_MS'
    | 'KAFKA_HEARTBEAT_INTERVAL_MS'
    | 'KAFKA_REBALANCE_TIMEOUT_MS'
    | 'TENANT_CONFIG_TTL_MS'
    | 'OPENAI_BASE_URL'
    | 'LLM_BASE_URL'
  >;
  log: Logger;
  db: Db;
  kafka: Kafka;
  engine: ModerationEngine;
  /** Live moderations in flight: a job slows to its background rate beside them. */
  liveActivity: ActivityGate;
  topics: Topics;
  versions: TenantVersions;
  registry?: Registry;
  /** The re-run's moderation path, which retroactions apply records through. */
  service: Pick<ModerationUseCases, 'retroact'>;
}): Promise<BacktestConsumer | undefined> {
  const { config, log, db, kafka, engine, liveActivity, topics, versions, registry, service } = deps;
  if (!config.BACKTEST_CONSUMER_ENABLED) return undefined;
  const store = new BacktestStore(db);
  await untilDone(log, 'backtest indexes', () => store.ensureIndexes());
  const retroStore = new RetroactionStore(db);
  await untilDone(log, 'retroaction indexes', () => retroStore.ensureIndexes());
  const records =
    registry &&
    new Counter({
      name: 'moderator_backtest_records_total',
      help: 'Records backtests went through, by outcome (judged, or skipped: passthrough, gone)',
      labelNames: ['outcome'],
      registers: [registry],
    });
  const jobs =
    registry &&
    new Counter({
      name: 'moderator_backtest_jobs_total',
      help: 'Backtest runs by outcome (succeeded, failed, cancelled, interrupted: left for the next runner)',
      labelNames: ['outcome'],
      registers: [registry],
    });
  const runner = new BacktestRunner({
    store,
    engine,
    tenants: new TenantConfigCache(db, config.TENANT_CONFIG_TTL_MS, log, versions),
    log: log.child({ component: 'backtest' }),
    ratePerSecond: config.BACKTEST_RATE_PER_S,
    live: { gate: liveActivity, quietMs: LIVE_QUIET_MS, ratePerSecond: config.BACKTEST_BUSY_RATE_PER_S },
    concurrency: RECORD_CONCURRENCY,
    batchSize: BATCH_SIZE,
    ai: { provider: config.OPENAI_BASE_URL !== undefined, llm: config.LLM_BASE_URL !== undefined },
    onRecord: (outcome) => records?.inc({ outcome }),
    onJob: (outcome) => jobs?.inc({ outcome }),
  });
  const retroRecords =
    registry &&
    new Counter({
      name: 'moderator_retroaction_records_total',
      help: 'Records retroactions went through, by outcome (toFlagged, toCompliant, unchanged, heldByHumans, skipped)',
      labelNames: ['outcome'],
      registers: [registry],
    });
  const retroJobs =
    registry &&
    new Counter({
      name: 'moderator_retroaction_jobs_total',
      help: 'Retroaction runs by outcome (succeeded, failed, cancelled, interrupted: resumed by the next runner)',
      labelNames: ['outcome'],
      registers: [registry],
    });
  const retroactions = new RetroactionRunner({
    store: retroStore,
    selection: store,
    retroact: (input, options) => service.retroact(input, options),
    log: log.child({ component: 'retroaction' }),
    ratePerSecond: config.RETROACTION_RATE_PER_S,
    live: { gate: liveActivity, quietMs: LIVE_QUIET_MS, ratePerSecond: config.BACKTEST_BUSY_RATE_PER_S },
    concurrency: RETRO_CONCURRENCY,
    batchSize: RETRO_BATCH_SIZE,
    onRecord: (outcome) => retroRecords?.inc({ outcome }),
    onJob: (outcome) => retroJobs?.inc({ outcome }),
  });
  const consumer = new BacktestConsumer({
    kafka,
    groupId: `${config.KAFKA_GROUP_ID}-backtests`,
    topic: topics.backtests,
    timing: {
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
      rebalanceTimeoutMs: config.KAFKA_REBALANCE_TIMEOUT_MS,
    },
    runner,
    retroactions,
    versions,
    concurrency: config.BACKTEST_JOBS,
    log: log.child({ component: 'backtest-consumer' }),
  });
  await untilDone(log, 'backtest consumer', () => consumer.start());
  return consumer;
}
