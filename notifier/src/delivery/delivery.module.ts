import { DomainEvent } from '@vigil/proto';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Config } from '../config';
import { indexed, type NotifierModule, type NotifierParts } from '../notifier-module';
import { DeliveryStore } from '../store/delivery-store';
import { EndpointStateStore } from '../store/endpoint-states';
import { isRetriable } from '../store/store-errors';
import { UpstreamReads } from '../store/upstream-reads';
import { DeliveryIntake } from './delivery-intake';
import { EndpointCache } from './endpoint-cache';
import { FanOut } from './fan-out';
import { createHttpSender } from './http-sender';
import { OUTCOME_WRITER_BOUNDS, OutcomeWriter } from './outcome-writer';
import { DeliveryScheduler, type AttemptResult } from './scheduler';
import { addressPolicy } from './ssrf';
import { WebhookCommands } from './webhook-commands';

export type DeliveryConfig = Pick<
  Config,
  | 'DELIVERY_WORKER_ENABLED'
  | 'WEBHOOK_RETRY_SCHEDULE_S'
  | 'WEBHOOK_TIMEOUT_MS'
  | 'WEBHOOK_ALLOWED_CIDRS'
  | 'WEBHOOK_RETRY_AFTER_MAX_S'
  | 'WEBHOOK_DISABLE_AFTER_S'
  | 'DELIVERY_LOG_RESPONSE_BODY'
  | 'DELIVERY_CONCURRENCY'
  | 'DELIVERY_CONCURRENCY_PER_ENDPOINT'
  | 'DELIVERY_POLL_MS'
  | 'DELIVERY_FIRST_ATTEMPT_WAIT_MS'
  | 'DELIVERY_BACKLOG_PARK_MS'
  | 'DELIVERY_WRITE_WINDOW_MS'
  | 'DELIVERY_LEASE_MARGIN_MS'
  | 'DELIVERY_PROJECTION_WAIT_MS'
  | 'ENDPOINT_CACHE_MS'
>;

/** Every event type: the fan-out reads each event's configuration version, whether or not it makes a webhook. */
const EVENT_TYPES = DomainEvent.options.map((schema) => schema.shape.type.value);

export interface DeliveryModule extends NotifierModule {
  /** Applies the gateway's webhook commands (retry, replay, re-enable), for the events consumer. */
  readonly commands: WebhookCommands;
  /**
   * The stores that follow a batch: of the deliveries whose first attempt was made before they were stored (after
   * their receivers answered or the wait ended, DeliveryIntake), and the outcome writer's gathered inserts. The events
   * consumer commits a batch once they are written.
   */
  readonly writeBehind: Pick<DeliveryIntake, 'settled' | 'close'>;
}

/**
 * Webhooks: the fan-out turns events into deliveries (its reaction), and where the delivery worker runs, the scheduler
 * sends them and retries the failed ones from the due queue. Shutdown: the outcome writer's gathered inserts are
 * written, the scheduler claims nothing more, the attempts in flight are recorded, then the HTTP agent closes.
 */
export async function deliveryModule(config: DeliveryConfig, parts: NotifierParts): Promise<DeliveryModule> {
  const { db, log } = parts;
  const store = await indexed(parts, 'delivery indexes', new DeliveryStore(db, parts.timing));
  const endpointStates = new EndpointStateStore(db);
  const reads = new UpstreamReads(db, endpointStates);
  const { versions } = parts;
  const endpoints = new EndpointCache(reads, endpointStates, config.ENDPOINT_CACHE_MS, versions);
  let scheduler: DeliveryScheduler | undefined;
  // Where a first attempt is made (the worker runs, with a wait), its delivery's insert may be written behind.
  const writer =
    config.DELIVERY_WORKER_ENABLED && config.DELIVERY_FIRST_ATTEMPT_WAIT_MS > 0 && config.DELIVERY_WRITE_WINDOW_MS > 0
      ? new OutcomeWriter(store, {
          ...OUTCOME_WRITER_BOUNDS,
          windowMs: config.DELIVERY_WRITE_WINDOW_MS,
          retriable: isRetriable,
          onDropped: () => metrics?.writesDropped.inc(),
          log: log.child({ component: 'delivery' }),
        })
      : undefined;
  const metrics = parts.registry ? deliveryMetrics(parts.registry, store, () => scheduler, writer) : undefined;
  const sender = config.DELIVERY_WORKER_ENABLED
    ? createHttpSender({
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
        policy: addressPolicy(config.WEBHOOK_ALLOWED_CIDRS),
        keepResponseBody: config.DELIVERY_LOG_RESPONSE_BODY,
      })
    : undefined;
  if (sender) {
    scheduler = new DeliveryScheduler({
      store,
      endpointStates,
      reads,
      endpoints,
      sender,
      log: log.child({ component: 'delivery' }),
      retryScheduleS: config.WEBHOOK_RETRY_SCHEDULE_S,
      retryAfterMaxMs: config.WEBHOOK_RETRY_AFTER_MAX_S * 1000,
      disableAfterMs: config.WEBHOOK_DISABLE_AFTER_S * 1000,
      concurrency: config.DELIVERY_CONCURRENCY,
      perEndpointConcurrency: config.DELIVERY_CONCURRENCY_PER_ENDPOINT,
      pollMs: config.DELIVERY_POLL_MS,
      leaseMs: config.WEBHOOK_TIMEOUT_MS + config.DELIVERY_LEASE_MARGIN_MS,
      attemptMs: config.WEBHOOK_TIMEOUT_MS,
      projectionWaitMs: config.DELIVERY_PROJECTION_WAIT_MS,
      slowAttemptMs: config.DELIVERY_FIRST_ATTEMPT_WAIT_MS,
      backlogParkMs: config.DELIVERY_BACKLOG_PARK_MS,
      onAttempt: (result: AttemptResult, durationMs: number) => {
        metrics?.attempts.inc({ result });
        metrics?.duration.observe({ result }, durationMs / 1000);
      },
      onOutcomeNotRecorded: () => metrics?.outcomesNotRecorded.inc(),
      onHealthWriteFailed: () => metrics?.healthWritesFailed.inc(),
    });
  }
  // New or re-opened deliveries exist: the scheduler looks now.
  const wake = () => scheduler?.wake();
  const intake = new DeliveryIntake(
    store,
    scheduler,
    wake,
    {
      firstAttemptWaitMs: config.DELIVERY_FIRST_ATTEMPT_WAIT_MS,
      inserts: { retriable: isRetriable },
      onDropped: () => metrics?.writesDropped.inc(),
      log: log.child({ component: 'delivery' }),
    },
    writer,
  );
  const fanOut = new FanOut({
    endpoints,
    versions,
    reads,
    intake,
    statementContext: async (tenantId) => ({
      appealWindowDays: (await parts.settings.settingsOf(tenantId)).appealWindowDays,
    }),
  });
  const eventsLog = log.child({ component: 'events' });
  return {
    name: 'webhooks',
    commands: new WebhookCommands({ store, endpointStates, endpoints, onWork: wake }),
    writeBehind: {
      settled: () => {
        const stores = [intake.settled(), writer?.settled()].filter((p) => p !== undefined);
        return stores.length > 0 ? Promise.all(stores).then(() => undefined) : undefined;
      },
      // The first attempts' stores hand deliveries to the writer: they go first.
      close: async () => {
        await intake.close();
        await writer?.close();
      },
    },
    reactions: [
      { name: 'webhooks', applicableEvents: EVENT_TYPES, react: (events) => fanOut.handle(events, eventsLog) },
    ],
    start: () => scheduler?.start(),
    drain: async () => {
      // The events consumer wrote what waited as it stopped (within the deadlines); these are no-ops then.
      await intake.close();
      await writer?.close();
      await scheduler?.stop();
      await sender?.close();
    },
  };
}

function deliveryMetrics(
  registry: Registry,
  store: DeliveryStore,
  scheduler: () => DeliveryScheduler | undefined,
  writer: OutcomeWriter | undefined,
) {
  return {
    attempts: new Counter({
      name: 'notifier_deliveries_total',
      help: 'Webhook delivery attempts by result',
      labelNames: ['result'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'notifier_delivery_duration_seconds',
      help: 'Duration of webhook delivery attempts',
      labelNames: ['result'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    }),
    due: new Gauge({
      name: 'notifier_deliveries_due',
      help: 'Deliveries due now and not yet claimed that this process holds as candidates (backlog)',
      registers: [registry],
      collect() {
        this.set(store.countDue(new Date()));
      },
    }),
    // Workers busy while endpoint slots are free: the outcome writes (the store) are what holds deliveries back.
    workers: new Gauge({
      name: 'notifier_delivery_workers_busy',
      help: 'Deliveries being worked in this process until their outcome is written (of DELIVERY_CONCURRENCY)',
      registers: [registry],
      collect() {
        this.set(scheduler()?.slots.workers ?? 0);
      },
    }),
    // Webhooks sent whose deliveries wait for their insert; at the writer's bound, batches wait (the store is slow).
    writesPending: new Gauge({
      name: 'notifier_delivery_writes_pending',
      help: 'Deliveries stored with their first attempt that wait for their insert (gathered per DELIVERY_WRITE_WINDOW_MS)',
      registers: [registry],
      collect() {
        this.set(writer?.pending ?? 0);
      },
    }),
    outcomesNotRecorded: new Counter({
      name: 'notifier_delivery_lost_outcomes_total',
      help: 'Attempt outcomes not written because the delivery was no longer leased to the worker (taken over, or stored by another notifier)',
      registers: [registry],
    }),
    healthWritesFailed: new Counter({
      name: 'notifier_endpoint_health_failures_total',
      help: 'Endpoint health writes after a recorded outcome (streak cleared, endpoint disabled) that failed every try',
      registers: [registry],
    }),
    writesDropped: new Counter({
      name: 'notifier_delivery_writes_dropped_total',
      help: 'Deliveries whose webhook was sent and which the store refused for a reason of their own (not written)',
      registers: [registry],
    }),
    endpointSlots: new Gauge({
      name: 'notifier_endpoint_slots_in_use',
      help: 'Endpoint slots taken in this process: webhook requests in flight or about to be sent (each endpoint has DELIVERY_CONCURRENCY_PER_ENDPOINT)',
      registers: [registry],
      collect() {
        this.set(scheduler()?.slots.endpoints ?? 0);
      },
    }),
  };
}
