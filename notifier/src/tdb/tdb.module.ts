import { SecretBox } from '@vigil/proto';
import { untilDone, ConsumerMetrics } from '@vigil/proto/platform';
import type { Config } from '../config';
import { addressPolicy } from '../delivery/ssrf';
import { counterIn, indexed, type NotifierModule, type NotifierParts } from '../notifier-module';
import { TdbStore } from '../store/tdb-store';
import { createTdbClient } from './tdb-client';
import { TdbConsumer } from './tdb-consumer';
import { TdbSubmissions } from './tdb-submissions';

export type TdbConfig = Pick<
  Config,
  | 'DELIVERY_WORKER_ENABLED'
  | 'DELIVERY_LEASE_MARGIN_MS'
  | 'WEBHOOK_ALLOWED_CIDRS'
  | 'SECRETS_ENCRYPTION_KEY'
  | 'KAFKA_GROUP_ID'
  | 'KAFKA_COMMIT_INTERVAL_MS'
  | 'TDB_TIMEOUT_MS'
  | 'TDB_RETRY_SCHEDULE_S'
  | 'TDB_CONCURRENCY'
  | 'TDB_POLL_MS'
  | 'TDB_BATCH_WAIT_MS'
>;

/**
 * Statements of reasons for the Transparency Database: submitted by a consumer group of its own (a few seconds of
 * events per call), failed calls retried from MongoDB; both run where the delivery worker runs. It reads the events
 * topic itself, so it declares no reaction of the events consumer.
 */
export async function tdbModule(config: TdbConfig, parts: NotifierParts): Promise<NotifierModule> {
  const { log, registry } = parts;
  const store = await indexed(
    parts,
    'transparency database indexes',
    new TdbStore(parts.db, parts.timing, parts.versions),
  );
  const statements = counterIn(
    parts,
    'notifier_tdb_statements_total',
    'Statements of reasons sent to the Transparency Database, by result of the call that carried them',
  );
  const setAside = counterIn(
    parts,
    'notifier_tdb_set_aside_total',
    "Statements of reasons set aside (neither submitted, queued nor logged), or logged without the Transparency Database's answer, by reason",
    'reason',
  );
  const tdbLog = log.child({ component: 'tdb' });
  const submissions = new TdbSubmissions({
    store,
    client: createTdbClient({ timeoutMs: config.TDB_TIMEOUT_MS, policy: addressPolicy(config.WEBHOOK_ALLOWED_CIDRS) }),
    ...(config.SECRETS_ENCRYPTION_KEY ? { secrets: new SecretBox(config.SECRETS_ENCRYPTION_KEY) } : {}),
    log: tdbLog,
    retryScheduleS: config.TDB_RETRY_SCHEDULE_S,
    pollMs: config.TDB_POLL_MS,
    leaseMs: config.TDB_TIMEOUT_MS * 2 + config.DELIVERY_LEASE_MARGIN_MS,
    concurrency: config.TDB_CONCURRENCY,
    onResult: (result, count) => statements?.inc({ result }, count),
    onSetAside: (reason, count) => setAside?.inc({ reason }, count),
  });
  const consumer = config.DELIVERY_WORKER_ENABLED
    ? new TdbConsumer({
        kafka: parts.kafka,
        groupId: `${config.KAFKA_GROUP_ID}-tdb`,
        topic: parts.topics.events,
        timing: parts.consumerTiming,
        batchWaitMs: config.TDB_BATCH_WAIT_MS,
        commitIntervalMs: config.KAFKA_COMMIT_INTERVAL_MS,
        metrics: registry ? new ConsumerMetrics(registry, 'notifier_tdb_consumer') : undefined,
        submit: (events) => submissions.submit(events),
        log: tdbLog,
      })
    : undefined;
  return {
    name: 'transparency database',
    start: async () => {
      if (!consumer) return;
      submissions.start();
      await untilDone(log, 'transparency database consumer', () => consumer.start());
    },
    stopIntake: () => consumer?.stop(),
    drain: () => submissions.stop(),
  };
}
