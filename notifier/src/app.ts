import { TenantVersions, topicNames } from '@vigil/proto';
import { connectStore, ModuleList, type FeatureModule } from '@vigil/proto/platform';
import type { Kafka } from 'kafkajs';
import type { MongoClient } from 'mongodb';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Config } from './config';
import { deliveryModule, type DeliveryConfig } from './delivery/delivery.module';
import { emailModule, type EmailConfig } from './email/email.module';
import { kafkaModule, type KafkaConfig } from './kafka/kafka.module';
import type { NotifierModule, NotifierParts } from './notifier-module';
import { paymentsModule, type PaymentsConfig } from './payments/payments.module';
import { TenantSettingsReads } from './store/tenant-settings';
import { tdbModule, type TdbConfig } from './tdb/tdb.module';

/** What the shared parts read; each module declares its own slice. */
type SharedConfig = Pick<
  Config,
  | 'MONGO_DB'
  | 'KAFKA_TOPIC_PREFIX'
  | 'KAFKA_SESSION_TIMEOUT_MS'
  | 'KAFKA_HEARTBEAT_INTERVAL_MS'
  | 'KAFKA_REBALANCE_TIMEOUT_MS'
  | 'DUE_BUCKET_MS'
  | 'DUE_GRACE_MS'
>;

export type NotifierConfig = SharedConfig & DeliveryConfig & EmailConfig & PaymentsConfig & TdbConfig & KafkaConfig;

export interface NotifierDeps {
  config: NotifierConfig;
  log: Logger;
  /** Connected or not: the driver connects on first use. */
  mongo: MongoClient;
  kafka: Kafka;
  registry?: Registry;
}

/**
 * The started notifier: its modules in list order. Shutdown phase 1 (`stopIntake`) stops the consumers; phase 2
 * (`drain`) records the attempts in flight and closes the clients.
 */
export type Notifier = ModuleList;

/**
 * Builds and starts the notifier around the given clients (the composition root passes real ones, tests too): the
 * shared parts, then each feature module (its indexes made as it is built), then starts them in list order.
 */
export async function createNotifier(deps: NotifierDeps): Promise<Notifier> {
  const { config, log, mongo, kafka, registry } = deps;
  const db = mongo.db(config.MONGO_DB, { ignoreUndefined: true });
  await connectStore(log, mongo);
  const versions = new TenantVersions();
  const parts: NotifierParts = {
    log,
    db,
    kafka,
    registry,
    topics: topicNames(config.KAFKA_TOPIC_PREFIX),
    consumerTiming: {
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
      rebalanceTimeoutMs: config.KAFKA_REBALANCE_TIMEOUT_MS,
    },
    timing: dueQueueTiming(config, log, registry),
    versions,
    settings: new TenantSettingsReads(db, versions),
  };

  const delivery = await deliveryModule(config, parts);
  const features: NotifierModule[] = [
    delivery,
    await emailModule(config, parts),
    await paymentsModule(config, parts),
    await tdbModule(config, parts),
  ];
  const events = await kafkaModule(config, parts, {
    reactions: features.flatMap((feature) => feature.reactions ?? []),
    commands: delivery.commands,
    writeBehind: delivery.writeBehind,
  });
  const modules = new ModuleList(log, [storeModule(parts), ...features, events]);
  await modules.start();
  log.info('notifier ready');
  return modules;
}

/** Readiness: the store answers. */
function storeModule({ db }: NotifierParts): FeatureModule {
  return {
    name: 'store',
    ready: async () => {
      await db.command({ ping: 1 });
      return true;
    },
  };
}

/** The due queues' buckets; a job a queue could not move on as planned is logged and counted, by queue and kind. */
function dueQueueTiming(config: SharedConfig, log: Logger, registry?: Registry): NotifierParts['timing'] {
  const incidents = registry
    ? new Counter({
        name: 'notifier_queue_incidents_total',
        help: 'Jobs a due queue could not move on as planned (each found again, see DueQueue), by queue and kind',
        labelNames: ['queue', 'kind'],
        registers: [registry],
      })
    : undefined;
  return {
    bucketMs: config.DUE_BUCKET_MS,
    graceMs: config.DUE_GRACE_MS,
    onIncident: ({ queue, kind, jobId, err }) => {
      incidents?.inc({ queue, kind });
      log.warn({ err, queue, kind, jobId }, 'queued job not moved on as planned');
    },
  };
}
