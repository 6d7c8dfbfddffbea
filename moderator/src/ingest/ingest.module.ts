import { untilDone, ConsumerMetrics, notingPartitioner } from '@vigil/proto/platform';
import { ConfirmedProducer } from './confirmed-producer';
import type { Config } from '../config';
import type { ModeratorModule, SharedParts } from '../shared-parts';
import type { KnownTenants } from '../store/known-tenants';
import { moderate } from '../service/moderate';
import { deleteRecord } from '../service/record-decisions';
import { checkReplay } from '../service/replay-check';
import { rerunModeration } from '../service/rerun';
import type { UseCases } from '../service/use-cases';
import { upsertUser } from '../service/user-decisions';
import { IngestCommandHandler } from './ingest-command-handler';
import { IngestConsumer, type IngestBackpressure, type IngestConsumerOptions } from './ingest-consumer';

/** The variables the ingest consumer reads (see `config.ts`). */
export type IngestConfig = Pick<
  Config,
  | 'INGEST_CONSUMER_ENABLED'
  | 'KAFKA_GROUP_ID'
  | 'KAFKA_SESSION_TIMEOUT_MS'
  | 'KAFKA_HEARTBEAT_INTERVAL_MS'
  | 'KAFKA_REBALANCE_TIMEOUT_MS'
  | 'KAFKA_COMMIT_INTERVAL_MS'
  | 'INGEST_CONCURRENCY'
  | 'INGEST_KEY_CONCURRENCY'
  | 'INGEST_GATHER_MS'
  | 'INGEST_GROUP_WAIT_MS'
  | 'INGEST_RETRY_INITIAL_MS'
  | 'INGEST_RETRY_MAX_MS'
  | 'INGEST_MAX_UNEXPECTED_ATTEMPTS'
>;

/**
 * The ingest consumer: commands from the `ingest` topic, applied by the use cases, committed or dead-lettered. It
 * joins its group at start and leaves it with the intake; its dead-letter producer disconnects in the drain. A module
 * without work when INGEST_CONSUMER_ENABLED is false.
 */
export async function ingestModule(
  config: IngestConfig,
  { log, db, kafka, topics, versions, registry, metrics }: SharedParts,
  deps: {
    useCases: UseCases;
    tenants: KnownTenants;
    /** The outbox relay: commands wait while it has no room. */
    backpressure: IngestBackpressure;
    /** Whether the store answers now; a `ping` of the database by default. */
    storeAnswers?: IngestConsumerOptions['storeAnswers'];
    /** The commands being worked on that the event store's group appends wait for. */
    gathering?: IngestConsumerOptions['gathering'];
  },
): Promise<ModeratorModule> {
  if (!config.INGEST_CONSUMER_ENABLED) return { name: 'ingest' };
  const { useCases } = deps;
  // The consumer's dead letters. Its sends are checked against the broker's answers and a failed one replaces it (see
  // ConfirmedProducer): a dead letter dropped while a broker died would lose the command, since its offset is
  // committed after the send. Connected before anything takes work.
  const producer = new ConfirmedProducer(() =>
    kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: notingPartitioner }),
  );
  await untilDone(log, 'kafka producer', () => producer.connect());
  const consumer = new IngestConsumer({
    kafka,
    groupId: config.KAFKA_GROUP_ID,
    timing: {
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
      rebalanceTimeoutMs: config.KAFKA_REBALANCE_TIMEOUT_MS,
    },
    metrics: registry ? new ConsumerMetrics(registry, 'moderator_ingest_consumer') : undefined,
    commitIntervalMs: config.KAFKA_COMMIT_INTERVAL_MS,
    backpressure: deps.backpressure,
    topics,
    handler: new IngestCommandHandler({
      service: {
        moderate: (input) => moderate(useCases, input),
        rerunModeration: (input) => rerunModeration(useCases, input),
        deleteRecord: (input) => deleteRecord(useCases, input),
        upsertUser: (input) => upsertUser(useCases, input),
        checkReplay: (command) => checkReplay(useCases.store, command),
      },
      tenants: deps.tenants,
      versions,
    }),
    producer,
    log: log.child({ component: 'ingest' }),
    concurrency: config.INGEST_CONCURRENCY,
    keyConcurrency: config.INGEST_KEY_CONCURRENCY,
    gatherMs: config.INGEST_GATHER_MS,
    gathering: deps.gathering,
    retryInitialMs: config.INGEST_RETRY_INITIAL_MS,
    retryMaxMs: config.INGEST_RETRY_MAX_MS,
    maxUnexpectedAttempts: config.INGEST_MAX_UNEXPECTED_ATTEMPTS,
    // `ping` reaches the backend on MongoDB and FerretDB alike (FerretDB asks PostgreSQL for its status).
    storeAnswers: deps.storeAnswers ?? (async () => (await db.command({ ping: 1 })).ok === 1),
    onOutcome: (outcome) => metrics?.ingest.inc({ outcome }),
    onDeadLetter: (reason) => metrics?.ingestDeadLetters.inc({ reason }),
  });
  return {
    name: 'ingest',
    start: () => untilDone(log, 'ingest consumer', () => consumer.start()),
    stopIntake: () => consumer.stop(),
    drain: () => producer.disconnect(),
  };
}
