import { AppealTokens, ConsumerMetrics, SecretBox, TenantVersions, topicNames } from '@vigil/proto';
import type { Kafka } from 'kafkajs';
import type { MongoClient } from 'mongodb';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Config } from './config';
import { DeliveryIntake } from './delivery/delivery-intake';
import { EndpointCache } from './delivery/endpoint-cache';
import { FanOut } from './delivery/fan-out';
import { createHttpSender, type HttpSender } from './delivery/http-sender';
import { DeliveryScheduler, type AttemptResult } from './delivery/scheduler';
import { addressPolicy } from './delivery/ssrf';
import { WebhookCommands } from './delivery/webhook-commands';
import { createSmtpSender } from './email/smtp-sender';
import { UserEmails } from './email/user-emails';
import { EventsConsumer } from './kafka/events-consumer';
import { ensureTopics } from './kafka/topics-setup';
import { PaymentActions } from './payments/payment-actions';
import { createStripeClient } from './payments/stripe-client';
import { connectStore, untilDone } from '@vigil/proto/platform';
import { DeadLetterStore } from './store/dead-letter-store';
import { DeliveryStore } from './store/delivery-store';
import type { DueQueueTiming } from './store/due-queue';
import { EndpointStateStore } from './store/endpoint-states';
import { UpstreamReads } from './store/upstream-reads';
import { EmailStore } from './store/email-store';
import { PaymentStore } from './store/payment-store';
import { TdbStore } from './store/tdb-store';
import { createTdbClient } from './tdb/tdb-client';
import { TdbConsumer } from './tdb/tdb-consumer';
import { TdbSubmissions } from './tdb/tdb-submissions';

export type NotifierConfig = Pick<
  Config,
  | 'MONGO_DB'
  | 'KAFKA_TOPIC_PREFIX'
  | 'KAFKA_GROUP_ID'
  | 'KAFKA_SESSION_TIMEOUT_MS'
  | 'KAFKA_HEARTBEAT_INTERVAL_MS'
  | 'KAFKA_REBALANCE_TIMEOUT_MS'
  | 'KAFKA_COMMIT_INTERVAL_MS'
  | 'KAFKA_TOPIC_PARTITIONS'
  | 'WEBHOOK_RETRY_SCHEDULE_S'
  | 'WEBHOOK_TIMEOUT_MS'
  | 'WEBHOOK_ALLOWED_CIDRS'
  | 'DELIVERY_LOG_RESPONSE_BODY'
  | 'WEBHOOK_RETRY_AFTER_MAX_S'
  | 'WEBHOOK_DISABLE_AFTER_S'
  | 'DELIVERY_WORKER_ENABLED'
  | 'DELIVERY_CONCURRENCY'
  | 'DELIVERY_CONCURRENCY_PER_ENDPOINT'
  | 'DELIVERY_POLL_MS'
  | 'DELIVERY_LEASE_MARGIN_MS'
  | 'DELIVERY_PROJECTION_WAIT_MS'
  | 'DUE_BUCKET_MS'
  | 'DUE_GRACE_MS'
  | 'ENDPOINT_CACHE_MS'
  | 'SMTP_URL'
  | 'EMAIL_MAX_DELAY_S'
  | 'EMAIL_FROM'
  | 'EMAIL_TIMEOUT_MS'
  | 'EMAIL_RETRY_SCHEDULE_S'
  | 'EMAIL_CONCURRENCY'
  | 'EMAIL_POLL_MS'
  | 'APPEAL_TOKEN_SECRET'
  | 'APPEAL_TOKEN_TTL_S'
  | 'GATEWAY_PUBLIC_URL'
  | 'SECRETS_ENCRYPTION_KEY'
  | 'STRIPE_API_BASE_URL'
  | 'PAYMENTS_TIMEOUT_MS'
  | 'PAYMENTS_RETRY_SCHEDULE_S'
  | 'PAYMENTS_CONCURRENCY'
  | 'PAYMENTS_POLL_MS'
  | 'TDB_TIMEOUT_MS'
  | 'TDB_RETRY_SCHEDULE_S'
  | 'TDB_CONCURRENCY'
  | 'TDB_POLL_MS'
  | 'TDB_BATCH_WAIT_MS'
>;

export interface NotifierDeps {
  config: NotifierConfig;
  log: Logger;
  /** Connected or not: the driver connects on first use. */
  mongo: MongoClient;
  kafka: Kafka;
  registry?: Registry;
}

export interface Notifier {
  store: DeliveryStore;
  endpointStates: EndpointStateStore;
  emails: UserEmails;
  payments: PaymentActions;
  tdb: TdbSubmissions;
  scheduler?: DeliveryScheduler;
  ready(): Promise<boolean>;
  /** Shutdown phase 1: the consumer leaves the group, the scheduler claims nothing more. */
  stopIntake(): Promise<void>;
  /** Shutdown phase 2: attempts in flight recorded, HTTP agent closed. */
  drain(): Promise<void>;
}

/** Builds and starts the notifier around the given clients (the composition root passes real ones, tests too). */
export async function createNotifier(deps: NotifierDeps): Promise<Notifier> {
  const { config, log, mongo, kafka } = deps;
  const topics = topicNames(config.KAFKA_TOPIC_PREFIX);
  // Optional fields stay absent in stored documents instead of becoming null.
  const db = mongo.db(config.MONGO_DB, { ignoreUndefined: true });
  const incidents = deps.registry
    ? new Counter({
        name: 'notifier_queue_incidents_total',
        help: 'Jobs a due queue could not move on as planned (each found again, see DueQueue), by queue and kind',
        labelNames: ['queue', 'kind'],
        registers: [deps.registry],
      })
    : undefined;
  const timing: DueQueueTiming = {
    bucketMs: config.DUE_BUCKET_MS,
    graceMs: config.DUE_GRACE_MS,
    onIncident: ({ queue, kind, jobId, err }) => {
      incidents?.inc({ queue, kind });
      log.warn({ err, queue, kind, jobId }, 'queued job not moved on as planned');
    },
  };
  const store = new DeliveryStore(db, timing);
  await connectStore(log, mongo);
  await untilDone(log, 'delivery indexes', () => store.ensureIndexes());
  const endpointStates = new EndpointStateStore(db);
  const reads = new UpstreamReads(db, endpointStates);
  // The tenants' configuration versions carried by events: an endpoint list read before a newer one is stale.
  const versions = new TenantVersions();
  const endpoints = new EndpointCache(reads, endpointStates, config.ENDPOINT_CACHE_MS, versions);
  const emailStore = new EmailStore(db, timing);
  await untilDone(log, 'email indexes', () => emailStore.ensureIndexes());
  const paymentStore = new PaymentStore(db, timing);
  await untilDone(log, 'payment indexes', () => paymentStore.ensureIndexes());
  const tdbStore = new TdbStore(db, timing);
  await untilDone(log, 'transparency database indexes', () => tdbStore.ensureIndexes());
  await untilDone(log, 'kafka topics', () => ensureTopics(kafka, topics, config.KAFKA_TOPIC_PARTITIONS));

  let sender: HttpSender | undefined;
  let scheduler: DeliveryScheduler | undefined;
  const metrics = deps.registry ? createMetrics(deps.registry, store, () => scheduler) : undefined;
  if (config.DELIVERY_WORKER_ENABLED) {
    sender = createHttpSender({
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      policy: addressPolicy(config.WEBHOOK_ALLOWED_CIDRS),
      keepResponseBody: config.DELIVERY_LOG_RESPONSE_BODY,
    });
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
      projectionWaitMs: config.DELIVERY_PROJECTION_WAIT_MS,
      onAttempt: (result: AttemptResult, durationMs: number) => {
        metrics?.attempts.inc({ result });
        metrics?.duration.observe({ result }, durationMs / 1000);
      },
    });
    scheduler.start();
  }

  // Emails are sent by every instance whose delivery worker runs and that has SMTP_URL; the plan is written, pending, by
  // whichever consumes the event.
  const emails = new UserEmails({
    store: emailStore,
    sender: config.SMTP_URL
      ? createSmtpSender({ url: config.SMTP_URL, from: config.EMAIL_FROM, timeoutMs: config.EMAIL_TIMEOUT_MS })
      : undefined,
    log: log.child({ component: 'emails' }),
    retryScheduleS: config.EMAIL_RETRY_SCHEDULE_S,
    maxDelayMs: config.EMAIL_MAX_DELAY_S * 1000,
    pollMs: config.EMAIL_POLL_MS,
    // Connect, greeting and a few replies each have the timeout; the margin covers the database writes.
    leaseMs: config.EMAIL_TIMEOUT_MS * 4 + config.DELIVERY_LEASE_MARGIN_MS,
    concurrency: config.EMAIL_CONCURRENCY,
    ...(config.APPEAL_TOKEN_SECRET
      ? {
          appeals: {
            tokens: new AppealTokens(config.APPEAL_TOKEN_SECRET, config.APPEAL_TOKEN_TTL_S),
            complaints: new AppealTokens(config.APPEAL_TOKEN_SECRET, config.APPEAL_TOKEN_TTL_S, Date.now, 'complaint'),
            publicUrl: config.GATEWAY_PUBLIC_URL,
          },
        }
      : {}),
    onAttempt: (result) => metrics?.emails.inc({ result }),
  });
  if (config.DELIVERY_WORKER_ENABLED) emails.start();

  // Payment actions run like the emails: planned by whichever instance consumes the event, run by every worker.
  const payments = new PaymentActions({
    store: paymentStore,
    client: createStripeClient({ baseUrl: config.STRIPE_API_BASE_URL, timeoutMs: config.PAYMENTS_TIMEOUT_MS }),
    ...(config.SECRETS_ENCRYPTION_KEY ? { secrets: new SecretBox(config.SECRETS_ENCRYPTION_KEY) } : {}),
    log: log.child({ component: 'payments' }),
    retryScheduleS: config.PAYMENTS_RETRY_SCHEDULE_S,
    pollMs: config.PAYMENTS_POLL_MS,
    leaseMs: config.PAYMENTS_TIMEOUT_MS + config.DELIVERY_LEASE_MARGIN_MS,
    concurrency: config.PAYMENTS_CONCURRENCY,
    onAttempt: (result) => metrics?.payments.inc({ result }),
  });
  if (config.DELIVERY_WORKER_ENABLED) payments.start();

  // Statements of reasons for the Transparency Database: submitted by a consumer group of their own (a few seconds of
  // events per call), failed calls retried from MongoDB; both run where the delivery worker runs.
  const tdb = new TdbSubmissions({
    store: tdbStore,
    client: createTdbClient({
      timeoutMs: config.TDB_TIMEOUT_MS,
      policy: addressPolicy(config.WEBHOOK_ALLOWED_CIDRS),
    }),
    ...(config.SECRETS_ENCRYPTION_KEY ? { secrets: new SecretBox(config.SECRETS_ENCRYPTION_KEY) } : {}),
    log: log.child({ component: 'tdb' }),
    retryScheduleS: config.TDB_RETRY_SCHEDULE_S,
    pollMs: config.TDB_POLL_MS,
    leaseMs: config.TDB_TIMEOUT_MS * 2 + config.DELIVERY_LEASE_MARGIN_MS,
    concurrency: config.TDB_CONCURRENCY,
    onResult: (result, count) => metrics?.tdb.inc({ result }, count),
    onSetAside: (reason, count) => metrics?.tdbSetAside.inc({ reason }, count),
  });
  const tdbConsumer = config.DELIVERY_WORKER_ENABLED
    ? new TdbConsumer({
        kafka,
        groupId: `${config.KAFKA_GROUP_ID}-tdb`,
        topic: topics.events,
        timing: {
          sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
          heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
          rebalanceTimeoutMs: config.KAFKA_REBALANCE_TIMEOUT_MS,
        },
        batchWaitMs: config.TDB_BATCH_WAIT_MS,
        commitIntervalMs: config.KAFKA_COMMIT_INTERVAL_MS,
        metrics: deps.registry ? new ConsumerMetrics(deps.registry, 'notifier_tdb_consumer') : undefined,
        submit: (events) => tdb.submit(events),
        log: log.child({ component: 'tdb' }),
      })
    : undefined;
  if (config.DELIVERY_WORKER_ENABLED) tdb.start();

  // New or re-opened deliveries exist: the scheduler looks now.
  const wake = () => scheduler?.wake();
  const consumer = new EventsConsumer({
    kafka,
    groupId: config.KAFKA_GROUP_ID,
    timing: {
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
      rebalanceTimeoutMs: config.KAFKA_REBALANCE_TIMEOUT_MS,
    },
    metrics: deps.registry ? new ConsumerMetrics(deps.registry, 'notifier_events_consumer') : undefined,
    commitIntervalMs: config.KAFKA_COMMIT_INTERVAL_MS,
    topics,
    fanOut: new FanOut({
      endpoints,
      versions,
      reads,
      intake: new DeliveryIntake(store, scheduler, wake),
      statementContext: async (tenantId) => ({
        appealWindowDays: (await emailStore.settingsOf(tenantId)).appealWindowDays,
      }),
    }),
    commands: new WebhookCommands({ store, endpointStates, endpoints, onWork: wake }),
    deadLetters: new DeadLetterStore(db),
    log: log.child({ component: 'events' }),
    onDeadLetter: (reason) => metrics?.deadLetters.inc({ reason }),
    onEvents: async (events) => {
      await emails.plan(events);
      await payments.plan(events);
    },
  });
  await untilDone(log, 'events consumer', () => consumer.start());
  if (tdbConsumer) await untilDone(log, 'transparency database consumer', () => tdbConsumer.start());
  log.info('notifier ready');

  let intakeStopped = false;
  return {
    store,
    endpointStates,
    emails,
    payments,
    tdb,
    scheduler,
    async ready() {
      if (intakeStopped) return false;
      await db.command({ ping: 1 });
      return true;
    },
    async stopIntake() {
      intakeStopped = true;
      await consumer.stop();
      await tdbConsumer?.stop();
    },
    async drain() {
      await scheduler?.stop();
      await emails.stop();
      await payments.stop();
      await tdb.stop();
      await sender?.close();
    },
  };
}

function createMetrics(registry: Registry, store: DeliveryStore, scheduler: () => DeliveryScheduler | undefined) {
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
    emails: new Counter({
      name: 'notifier_emails_total',
      help: 'User email attempts by result',
      labelNames: ['result'],
      registers: [registry],
    }),
    payments: new Counter({
      name: 'notifier_payment_actions_total',
      help: 'Payment action attempts (Stripe calls and the checks standing in for them) by result',
      labelNames: ['result'],
      registers: [registry],
    }),
    tdb: new Counter({
      name: 'notifier_tdb_statements_total',
      help: 'Statements of reasons sent to the Transparency Database, by result of the call that carried them',
      labelNames: ['result'],
      registers: [registry],
    }),
    tdbSetAside: new Counter({
      name: 'notifier_tdb_set_aside_total',
      help: "Statements of reasons set aside (neither submitted, queued nor logged), or logged without the Transparency Database's answer, by reason",
      labelNames: ['reason'],
      registers: [registry],
    }),
    deadLetters: new Counter({
      name: 'notifier_events_dead_letters_total',
      help: 'Events and webhook commands set aside after their retries, by reason',
      labelNames: ['reason'],
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
