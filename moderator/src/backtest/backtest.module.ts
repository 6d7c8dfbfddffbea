import { Counter } from 'prom-client';
import type { Config } from '../config';
import type { ActivityGate, ModerationEngine } from '../engine';
import { untilDone } from '@vigil/proto/platform';
import type { ModeratorModule, SharedParts } from '../shared-parts';
import { TenantConfigCache } from '../store/tenant-config';
import { BacktestConsumer } from './backtest-consumer';
import { BacktestRunner } from './backtest-runner';
import { BacktestStore } from './backtest-store';
import { RetroactionRunner, type RetroactionRunnerOptions } from './retroaction-runner';
import { RetroactionStore } from './retroaction-store';

/** Records judged at once by one job, and between two progress writes. */
const RECORD_CONCURRENCY = 4;
const BATCH_SIZE = 100;
/** How long after the last live moderation a job keeps its background rate. */
const LIVE_QUIET_MS = 1000;
/** Records a retroaction moderates at once, and between two progress writes (where a resumed run starts). */
const RETRO_CONCURRENCY = 2;
const RETRO_BATCH_SIZE = 20;

/** The variables backtests and retroactions read (see `config.ts`). */
export type BacktestConfig = Pick<
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

/**
 * Backtests run in the moderator, the home of the engine and the only reader of records' content, fed by the
 * `backtests` topic: a job survives its runner (Kafka hands its message to the next one), and several moderators
 * share the jobs by partition. Its consumer joins its group at start and leaves with the intake; a module without
 * work when BACKTEST_CONSUMER_ENABLED is false.
 */
export async function backtestModule(
  config: BacktestConfig,
  { log, db, kafka, topics, versions, registry }: SharedParts,
  deps: {
    engine: ModerationEngine;
    /** Live moderations in flight: a job slows to its background rate beside them. */
    liveActivity: ActivityGate;
    /** The re-run's moderation path, which retroactions apply records through. */
    retroact: RetroactionRunnerOptions['retroact'];
  },
): Promise<ModeratorModule> {
  const { engine, liveActivity } = deps;
  if (!config.BACKTEST_CONSUMER_ENABLED) return { name: 'backtests' };
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
      help: 'Backtest runs by outcome (succeeded, failed, cancelled; interrupted: left for the next runner; unrecorded: a failure not stored)',
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
      help: 'Retroaction runs by outcome (succeeded, failed, cancelled; interrupted: resumed by the next runner; unrecorded: a failure not stored)',
      labelNames: ['outcome'],
      registers: [registry],
    });
  const retroactions = new RetroactionRunner({
    store: retroStore,
    selection: store,
    retroact: deps.retroact,
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
  return {
    name: 'backtests',
    start: () => untilDone(log, 'backtest consumer', () => consumer.start()),
    stopIntake: () => consumer.stop(),
  };
}
