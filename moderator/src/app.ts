import { topicNames, TenantVersions, type DomainEvent } from '@vigil/proto';
import {
  connectStore,
  ensureTopics,
  Gathering,
  ModuleList,
  runReactions,
  untilDone,
  type Reaction,
} from '@vigil/proto/platform';
import type { Kafka } from 'kafkajs';
import type { MongoClient } from 'mongodb';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { backtestModule, type BacktestConfig } from './backtest/backtest.module';
import type { Config } from './config';
import type { ModerationEngine } from './engine';
import { engineModule, imageFetcherFor, type EngineConfig } from './engine/engine.module';
import { erasureModule } from './erasure/erasure.module';
import { grpcModule } from './grpc/grpc.module';
import { hashBanksModule, type HashBanksConfig } from './hash-banks/hash-banks.module';
import { hashRetroModule, type HashRetroConfig } from './hash-banks/retro/hash-retro.module';
import { hashFeedsModule, type HashFeedsConfig } from './hash-banks/feeds/feeds.module';
import type { GrpcServerConfig } from './grpc/server';
import { ingestModule, type IngestConfig } from './ingest/ingest.module';
import { createMetrics } from './metrics';
import type { OutboxRelay } from './outbox/outbox-relay';
import { outboxModule, type OutboxConfig } from './outbox/outbox.module';
import { precisionModule } from './precision/precision.module';
import { retroact } from './service/rerun';
import { createUseCases, type UseCases } from './service/use-cases';
import { Queries } from './service/queries';
import { shadowModule, type ShadowModule } from './shadow/shadow.module';
import type { SharedParts } from './shared-parts';
import type { DeadLetterStore } from './store/dead-letter-store';
import { EventStore } from './store/event-store';
import { KnownTenants } from './store/known-tenants';
import { ReadModel } from './store/read-model';
import { TenantConfigCache } from './store/tenant-config';
import { transparencyModule } from './transparency/transparency.module';

/** The settings the moderator runs with: the shared parts' and each module's slice (defaults in `config.ts`). */
export type ModeratorConfig = Pick<
  Config,
  | 'MONGO_DB'
  | 'KAFKA_TOPIC_PREFIX'
  | 'KAFKA_TOPIC_PARTITIONS'
  | 'TENANT_CONFIG_TTL_MS'
  | 'KNOWN_TENANT_TTL_MS'
  | 'MODERATE_ASSUME_NEW'
> &
  EngineConfig &
  HashBanksConfig &
  HashRetroConfig &
  HashFeedsConfig &
  OutboxConfig &
  BacktestConfig &
  IngestConfig &
  GrpcServerConfig;

export interface ModeratorDeps {
  config: ModeratorConfig;
  log: Logger;
  mongo: MongoClient; // connected or not: the driver connects on first use
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
  useCases: UseCases; // the first argument of each use case (`service/`)
  relay: OutboxRelay;
  deadLetters: DeadLetterStore;
  modules: readonly string[]; // the feature modules, in the order they start
  ready(): Promise<boolean>; // dependencies answer
  /** Shutdown phase 1: NOT_SERVING, gRPC server closed, consumers left their groups, timers stopped. */
  stopIntake(): Promise<void>;
  /** Shutdown phase 2: shadow judgements done, outbox flushed, producer disconnected, pools closed. */
  drain(): Promise<void>;
}

/**
 * Builds and starts the moderator around the given clients (the composition root passes real ones, tests too): the
 * shared parts, then each feature module (its indexes ensured as it is built), then the modules started in order;
 * the gRPC health answers SERVING only once every module started.
 */
export async function createModerator(deps: ModeratorDeps): Promise<Moderator> {
  const { config, log, mongo, kafka, registry } = deps;
  const db = mongo.db(config.MONGO_DB);
  const topics = topicNames(config.KAFKA_TOPIC_PREFIX);
  const parts: SharedParts = {
    log,
    db,
    kafka,
    topics,
    versions: new TenantVersions(),
    registry,
    metrics: registry ? createMetrics(registry) : undefined,
  };
  // The ingest commands a fetch brought, moderated side by side, share their group appends (see Gathering).
  const gathering = config.INGEST_GROUP_WAIT_MS > 0 ? new Gathering(config.INGEST_GROUP_WAIT_MS) : undefined;
  const store = new EventStore(db, { gathering });
  await connectStore(log, mongo);
  await untilDone(log, 'event store indexes', () => store.ensureIndexes());
  await untilDone(log, 'kafka topics', () =>
    ensureTopics(
      kafka,
      [topics.ingest, topics.ingestDeadLetter, topics.events, topics.backtests],
      config.KAFKA_TOPIC_PARTITIONS,
    ),
  );
  const tenantConfig = new TenantConfigCache(db, config.TENANT_CONFIG_TTL_MS, log, parts.versions);
  const knownTenants = new KnownTenants(db, config.KNOWN_TENANT_TTL_MS);

  // The engine's image fetcher also serves the hash banks' lookups; fetched images meet the banks before the model.
  const fetcher = deps.engine ? undefined : imageFetcherFor(config);
  const outbox = await outboxModule(config, parts, store.outbox);
  const hashBanks = hashBanksModule(config, parts, {
    fetcher,
    policiesOf: async (tenantId) => (await tenantConfig.get(tenantId)).settings.policies,
    raise: async (event) => {
      if ((await store.streams.appendUnprojected([event])) === 0) return false;
      outbox.relay.appended([event]);
      return true;
    },
  });
  const hashFeeds = hashFeedsModule(config, parts);
  const engine = engineModule(config, parts, deps.engine, { fetcher, banks: hashBanks.matcher });
  const precision = await precisionModule(parts, {
    tenants: tenantConfig,
    append: (events) => store.streams.appendUnprojected(events),
    outbox: outbox.relay,
    verdictOf: (recordId) => shadow.runner.verdictOf(recordId),
  });
  const shadow: ShadowModule = shadowModule(parts, { engine: engine.engine, precision: precision.precision });
  const transparency = await transparencyModule(parts);
  // Its reaction keeps the records' image hashes; its passes write through the use cases built below.
  const hashRetro = await hashRetroModule(config, parts, {
    banks: hashBanks,
    moderation: () => useCases,
    liveActivity: engine.textActivity,
  });

  // What runs after each commit, each reaction on the event types it declares (PRECISION_EVENTS, TRANSPARENCY_EVENTS,
  // the record image hashes, the hash feeds' feedback); the commit's caller waits for them. A reaction's failure is logged and counted by its
  // module, never thrown.
  const reactions: Reaction<DomainEvent>[] = [
    ...precision.reactions,
    ...transparency.reactions,
    ...hashRetro.reactions,
    ...hashFeeds.reactions,
  ];
  const useCases = createUseCases({
    store,
    engine: engine.engine,
    tenants: tenantConfig,
    versions: parts.versions,
    outbox: outbox.relay,
    afterCommit: runReactions(reactions),
    shadow: shadow.runner,
    textActivity: engine.textActivity,
    assumeNew: config.MODERATE_ASSUME_NEW,
  });
  const queries = new Queries(store, new ReadModel(db));

  const grpc = grpcModule(config, parts, {
    useCases,
    queries,
    tenants: knownTenants,
    hashBanks: hashBanks.useCases,
    hashQuarantine: hashBanks.quarantine(useCases),
    hashFeeds: hashFeeds.useCases,
  });
  // Started in this order, stopped in the reverse: intake (gRPC, ingest, backtests, erasure) stops first, then the
  // shadow judgements drain, the outbox flushes and the engine's pools close.
  const modules = new ModuleList(log, [
    { name: 'event-store', ready: () => store.ping().then(() => true) },
    engine,
    hashBanks,
    hashFeeds,
    outbox,
    precision,
    transparency,
    shadow,
    erasureModule(parts, store.reportClaims),
    hashRetro,
    await backtestModule(config, parts, {
      engine: engine.engine,
      liveActivity: engine.textActivity,
      retroact: (input, options) => retroact(useCases, input, options),
    }),
    await ingestModule(config, parts, {
      useCases,
      tenants: knownTenants,
      backpressure: outbox.relay,
      storeAnswers: deps.storeAnswers,
      gathering,
    }),
    grpc,
  ]);
  await modules.start();
  grpc.serve();
  log.info({ modules: modules.modules.map((module) => module.name) }, 'moderator ready');

  return {
    grpcPort: grpc.port,
    store,
    useCases,
    relay: outbox.relay,
    deadLetters: outbox.deadLetters,
    modules: modules.modules.map((module) => module.name),
    ready: () => modules.ready(),
    stopIntake: () => modules.stopIntake(),
    drain: () => modules.drain(),
  };
}
