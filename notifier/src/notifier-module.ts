import type { DomainEvent, TenantVersions, Topics } from '@vigil/proto';
import type { ConsumerTiming } from '@vigil/proto/platform';
import { untilDone, type FeatureModule, type Reaction } from '@vigil/proto/platform';
import type { Kafka } from 'kafkajs';
import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { DueQueueTiming } from './store/queued-doc';
import type { TenantSettingsReads } from './store/tenant-settings';

/** What `app.ts` builds once and hands to every module factory. */
export interface NotifierParts {
  log: Logger;
  /** Optional fields stay absent in stored documents instead of becoming null. */
  db: Db;
  kafka: Kafka;
  /** The metrics registry; absent, modules count nothing. */
  registry?: Registry;
  topics: Topics;
  /** Session, heartbeat and rebalance timeouts of the notifier's consumer groups. */
  consumerTiming: ConsumerTiming;
  /** The due queues' time buckets, and where the queues tell of a job they could not move on as planned. */
  timing: DueQueueTiming;
  /**
   * The tenants' configuration versions carried by events: a cache entry (endpoints, settings) read at an older one is
   * stale.
   */
  versions: TenantVersions;
  /** The tenants' settings (the gateway's), read by the webhooks and the user emails. */
  settings: TenantSettingsReads;
}

/**
 * A feature of the notifier, as `app.ts` lists it: what it starts and stops (FeatureModule), and what it does with the
 * events the events consumer decodes, each reaction on the event types it declares. The reactions run before the
 * consumer commits the batch, and run again when the batch is handled again: each must be idempotent.
 */
export interface NotifierModule extends FeatureModule {
  readonly reactions?: readonly Reaction<DomainEvent>[];
}

/** A counter of the module's, by one label from a bounded set; absent when the notifier counts nothing (no registry). */
export function counterIn(
  parts: Pick<NotifierParts, 'registry'>,
  name: string,
  help: string,
  label = 'result',
): Counter | undefined {
  return parts.registry ? new Counter({ name, help, labelNames: [label], registers: [parts.registry] }) : undefined;
}

/** The store once the indexes it needs exist (retried while the store is out of reach, as every start step is). */
export async function indexed<S extends { ensureIndexes(): Promise<void> }>(
  parts: Pick<NotifierParts, 'log'>,
  what: string,
  store: S,
): Promise<S> {
  await untilDone(parts.log, what, () => store.ensureIndexes());
  return store;
}
