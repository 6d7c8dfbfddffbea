import { randomBytes } from 'node:crypto';
import {
  COLLECTIONS,
  type EmailMessageDoc,
  type PaymentActionDoc,
  type TdbSubmissionDoc,
  type UserDoc,
} from '@vigil/proto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { startMongo, type LocalMongo } from '../local/mongo';
import { ensureTopics } from '../local/topics';
import { startStoreRelay, droppedTotal, type StoreFault, type StoreRelay } from '../test-support/store-relay';
import { startStripe, type StripeServer } from '../test-support/stripe';
import { startTdb, type TdbServer } from '../test-support/tdb';
import { Load, paymentsAccount, userEmail } from './load';
import { createTenantKey, startMailReceiver, startReceiver } from './support';
import { commandsOnTopics, committedOffsets, eventsOnTopic } from './topic-evidence';
import {
  grpcAddressOf,
  loggedPort,
  spawnService,
  testServers,
  uniqueName,
  waitFor,
  type ServiceProcess,
} from '../test-support';

// DESIGN §2 and §8 with the store failing under the services: two moderators, two notifiers and a gateway reach the
// run's MongoDB-wire server only through a relay (deploy/test-support/store-relay.ts). While ingests and /moderate
// calls go through the gateway at a steady pace, the relay in turn resets every connection, holds the store's replies
// past the services' deadlines, and drops the replies of writes the store ran (so writes happen that their writer
// never hears of), each for several seconds with healthy load between; the webhook receiver answers 503 through two
// of them. Afterwards every accepted ingest (202) and answered /moderate (200) is a stored moderation with its webhook
// received once (repeats bounded by the attempts in flight when the store failed); each user suspension sent its email
// and paused payments once; each restricting decision (a flag, a suspension) is stored once in the local Transparency
// Database; no service died; and the only 5xx answers are the store or the moderator being unavailable (503) or late
// (504), for requests not counted.
//
// Kafka is the run's (KAFKA_BROKERS), with topics and groups of this test. The store is a MongoDB-wire server of this
// test's own (the kind the run uses), so that what the relay does to its connections cannot reach the rest of the
// suite's store.

/** Requests a second through the gateway; two in three are ingests, one in three /moderate. */
const RATE = 12;
/** Every fifth record is profane and has a user of its own, so it ends Flagged and suspends that user. */
const PROFANE_EVERY = 5;
/** The store faults in turn, with how long each lasts at least (it lasts until it did something, too). */
const SCHEDULE: Array<{ fault: StoreFault; ms: number }> = [
  { fault: 'reset', ms: 5_000 },
  { fault: 'delay', ms: 8_000 },
  { fault: 'drop', ms: 5_000 },
  { fault: 'reset', ms: 5_000 },
  { fault: 'drop', ms: 5_000 },
  { fault: 'delay', ms: 8_000 },
];
/** The faults (by index in SCHEDULE) from whose start until whose start the webhook receiver answers 503. */
const RECEIVER_DOWN = { from: 2, until: 4 };
/** Requests sent after a fault and ended before the next one: a few seconds of healthy load. */
const GAP_REQUESTS = 50;
/**
 * How long `delay` holds each store reply: past the gateway's /moderate deadline (MODERATE_TIMEOUT_MS and
 * GRPC_TIMEOUT_MS, 5 s), the delivery lease (WEBHOOK_TIMEOUT_MS + DELIVERY_LEASE_MARGIN_MS below, 7 s), the payment
 * lease (PAYMENTS_TIMEOUT_MS + margin, 5 s) and the Transparency Database lease (2 × TDB_TIMEOUT_MS + margin, 8 s). The
 * services set no socket timeout on the store (the driver's socketTimeoutMS is 0), so nothing cuts them short.
 */
const DELAY_MS = 9_000;
/** Deadline of the drain after the load: every check below waits within it. */
const DRAIN_MS = 100_000;
const SESSION_TIMEOUT_MS = '10000';
const NOTIFIERS = 2;
/** Attempts one notifier has in flight to one endpoint, and emails: what a store fault can leave sent but unrecorded. */
const DELIVERIES_IN_FLIGHT = 8;
const EMAILS_IN_FLIGHT = 4;
/** Repeats a store fault can cause at most: every notifier's attempts in flight, once per fault. */
const MAX_WEBHOOK_REPEATS = SCHEDULE.length * NOTIFIERS * DELIVERIES_IN_FLIGHT;
const MAX_EMAIL_REPEATS = SCHEDULE.length * NOTIFIERS * EMAILS_IN_FLIGHT;
/**
 * Answers allowed for requests that are then not counted: any 5xx (the store or the moderator unavailable or too late;
 * the summary lists them by status and message). A 4xx would be the store's failure shown as the client's.
 */
const ALLOWED_FAILURE = /^5\d\d /;

const servers = testServers();

describe('the stack over a store that resets, stalls and loses replies', () => {
  const db = uniqueName('e2e_store_chaos');
  const prefix = `${uniqueName('storechaos')}.`;
  const encryptionKey = randomBytes(32).toString('base64');
  let store: LocalMongo | undefined;
  let storeDir: string | undefined;
  let direct: MongoClient;
  const services: Array<{ name: string; service: ServiceProcess }> = [];
  let relay: StoreRelay | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  let mail: Awaited<ReturnType<typeof startMailReceiver>> | undefined;
  let stripe: StripeServer | undefined;
  let tdb: TdbServer | undefined;

  afterAll(async () => {
    relay?.setFault(undefined);
    await Promise.all(services.map(({ service }) => service.stop('SIGTERM')));
    await relay?.close();
    await receiver?.close();
    await mail?.close();
    await stripe?.close();
    await tdb?.close();
    await direct?.close();
    await store?.stop();
    if (storeDir) fs.rmSync(storeDir, { recursive: true, force: true });
  });

  it('stores, delivers, acts on and submits everything accepted, once', async () => {
    const started = Date.now();
    // The webhook receiver answers 503 from the first drop to the second: its endpoint's breakers open and its backlog
    // is parked while the store fails, then brought back by the first probe answered.
    let receiverDown = false;
    let refusedWebhooks = 0;
    let parkedWhileDown = 0;
    const events: Array<{ what: string; at: number }> = [];
    const note = (what: string) => {
      events.push({ what, at: Math.round((Date.now() - started) / 1000) });
      process.stdout.write(`store chaos: ${events.at(-1)!.at} s ${what}\n`);
    };
    storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-store-chaos-'));
    store = await startMongo({ dir: storeDir, ephemeral: true, durable: false });
    direct = new MongoClient(store.url);
    [relay, receiver, mail, stripe, tdb] = await Promise.all([
      startStoreRelay({ mongoUrl: store.url, delayMs: DELAY_MS }),
      startReceiver(() => {
        if (!receiverDown) return 204;
        refusedWebhooks += 1;
        return 503;
      }),
      startMailReceiver(),
      startStripe(),
      startTdb(),
    ]);
    const brokers = servers.kafkaBrokers.join(',');
    const eventsTopic = `${prefix}vigil.events.v1`;
    await ensureTopics({ brokers, prefix, partitions: 6 });
    note('servers started');

    const common = {
      MONGO_URL: relay.url,
      MONGO_DB: db,
      KAFKA_BROKERS: brokers,
      KAFKA_TOPIC_PREFIX: prefix,
      KAFKA_TOPIC_PARTITIONS: '6',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    };
    const start = (name: 'gateway' | 'moderator' | 'notifier', env: Record<string, string>) => {
      const service = spawnService(name, { ...common, ...env });
      services.push({ name, service });
      return service;
    };
    // On a busy 2-core machine a start has taken over a minute; one that never listens is reported with its output.
    const listening = (service: ServiceProcess, msg: string) =>
      loggedPort(service, msg, 'port', 180_000).catch((err: Error) => {
        throw new Error(`${err.message}; its last output: ${service.output().slice(-1500)}`);
      });
    const moderatorEnv = {
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: '0',
      KAFKA_GROUP_ID: `${prefix}moderator`,
      KAFKA_SESSION_TIMEOUT_MS: SESSION_TIMEOUT_MS,
    };
    // Short timeouts, leases and retries, so work a fault interrupted is taken up again within the drain's deadline.
    const notifierEnv = {
      KAFKA_GROUP_ID: `${prefix}notifier`,
      KAFKA_SESSION_TIMEOUT_MS: SESSION_TIMEOUT_MS,
      SECRETS_ENCRYPTION_KEY: encryptionKey,
      // Enough attempts for the probes of both notifiers while the receiver is down (each probe is one).
      WEBHOOK_RETRY_SCHEDULE_S: '0.5,1,1,2,2,2,2,2,2,2,2,2,2,2,2,2',
      WEBHOOK_TIMEOUT_MS: '5000',
      DELIVERY_CONCURRENCY_PER_ENDPOINT: String(DELIVERIES_IN_FLIGHT),
      DELIVERY_LEASE_MARGIN_MS: '2000',
      DUE_BUCKET_MS: '1000',
      DUE_GRACE_MS: '2000',
      SMTP_URL: mail.url,
      EMAIL_TIMEOUT_MS: '2000',
      EMAIL_POLL_MS: '200',
      EMAIL_CONCURRENCY: String(EMAILS_IN_FLIGHT),
      EMAIL_RETRY_SCHEDULE_S: '0.5,1,2,2,2',
      STRIPE_API_BASE_URL: stripe.url,
      PAYMENTS_TIMEOUT_MS: '3000',
      PAYMENTS_POLL_MS: '200',
      PAYMENTS_RETRY_SCHEDULE_S: '0.5,1,2,2,2',
      TDB_TIMEOUT_MS: '3000',
      TDB_POLL_MS: '200',
      TDB_BATCH_WAIT_MS: '300',
      TDB_RETRY_SCHEDULE_S: '0.5,1,1,2,2,2,2',
    };
    const moderators = [start('moderator', moderatorEnv), start('moderator', moderatorEnv)];
    const notifiers = Array.from({ length: NOTIFIERS }, () => start('notifier', notifierEnv));
    const addresses = await Promise.all(
      moderators.map(async (m) => {
        await listening(m, 'grpc server listening');
        return grpcAddressOf(m);
      }),
    );
    // The gateway balances over both moderators (round robin over the list), skipping one that stops answering.
    const gateway = start('gateway', {
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      MODERATOR_ADDRESS: `ipv4:${addresses.join(',')}`,
      RATE_LIMIT_POINTS: '0',
      SECRETS_ENCRYPTION_KEY: encryptionKey,
    });
    const [httpPort] = await Promise.all([
      listening(gateway, 'http server listening'),
      ...notifiers.map((n) => listening(n, 'admin server listening')),
    ]);
    note('services started');

    const tenant = uniqueName('tenant');
    const key = await createTenantKey(common, tenant);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const api = () => `http://127.0.0.1:${httpPort}/api/v1`;
    const setUp = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${api()}${path}`, { method, headers, body: JSON.stringify(body) });
      return `${method} ${path} ${res.status}`;
    };
    expect([
      await setUp('POST', '/webhook-endpoints', { url: receiver.url }),
      await setUp('PATCH', '/settings', {
        emails: { enabled: true },
        payments: { stripeSecretKey: `sk_test_${randomBytes(18).toString('hex')}` },
      }),
      await setUp('PUT', '/settings/transparency-database', {
        token: tdb.tokenFor(tenant),
        baseUrl: tdb.url,
        territorialScope: ['DE', 'FR'],
      }),
    ]).toEqual(['POST /webhook-endpoints 201', 'PATCH /settings 200', 'PUT /settings/transparency-database 200']);

    // The faults' work so far: connections reset or refused, replies held, replies dropped.
    const didSoFar = (fault: StoreFault) => {
      const counts = relay!.counts();
      if (fault === 'reset') return counts.reset + counts.refused;
      return fault === 'delay' ? counts.delayed : droppedTotal(counts);
    };
    const load = new Load({ api, gateways: 1, headers, profaneEvery: PROFANE_EVERY, started });
    load.start(RATE);
    try {
      await load.after(GAP_REQUESTS, 'the first requests');
      for (const [index, { fault, ms }] of SCHEDULE.entries()) {
        if (index === RECEIVER_DOWN.from) {
          receiverDown = true;
          note('webhook receiver down (503)');
        }
        if (index === RECEIVER_DOWN.until) {
          // Read past the relay: what the notifiers parked while the receiver was down.
          parkedWhileDown = await direct.db(db).collection(COLLECTIONS.deliveries).countDocuments({ parked: true });
          receiverDown = false;
          note(`webhook receiver up again (${parkedWhileDown} deliveries parked)`);
        }
        const before = didSoFar(fault);
        const since = Date.now();
        relay.setFault(fault);
        note(`store ${fault} on`);
        try {
          await waitFor(() => Date.now() - since >= ms && didSoFar(fault) > before, {
            timeoutMs: ms + 60_000,
            what: `the store relay's ${fault} to act`,
          });
        } finally {
          relay.setFault(undefined);
        }
        const what = { reset: 'connections reset', delay: 'replies held', drop: 'write replies dropped' }[fault];
        note(`store ${fault} off: ${didSoFar(fault) - before} ${what}`);
        // The healthy gap starts once the replies a delay held are out.
        await waitFor(() => relay!.held() === 0, { timeoutMs: DELAY_MS + 30_000, what: 'the held replies out' });
        await load.afterSentSince(Date.now(), GAP_REQUESTS, `load after the store ${fault}`);
      }
    } finally {
      await load.stop();
    }
    note('load ended');
    const loadEnded = Date.now();
    const drainDeadline = loadEnded + DRAIN_MS;

    // What the store holds now, read directly (not through the relay).
    const database = direct.db(db);
    const expected = load.expected();
    const suspensions = load.suspensions();
    const recordIds = new Map<string, string>(); // record id → clientId
    const userIds = new Map<string, string>(); // user id → clientId (u-<i>)
    const missingRecords = async () => {
      const records = await database
        .collection<{ _id: string; clientId: string; status?: string }>(COLLECTIONS.records)
        .find({}, { projection: { _id: 1, clientId: 1, status: 1 } })
        .toArray();
      const moderated = new Set<string>();
      for (const record of records) {
        if (!record.status) continue;
        moderated.add(record.clientId);
        recordIds.set(record._id, record.clientId);
      }
      return [...expected.keys()].filter((clientId) => !moderated.has(clientId));
    };
    const webhooksByClient = () => {
      const ids = new Map<string, Set<string>>();
      for (const webhook of receiver!.received) {
        const body = JSON.parse(webhook.body) as { event: string; payload: { id: string } };
        if (!body.event.startsWith('record.')) continue;
        const clientId = recordIds.get(body.payload.id);
        if (clientId === undefined) continue;
        const set = ids.get(clientId) ?? new Set<string>();
        set.add(String(webhook.headers['webhook-id']));
        ids.set(clientId, set);
      }
      return ids;
    };
    const missingWebhooks = () => {
      const have = webhooksByClient();
      return [...expected.keys()].filter((clientId) => !have.has(clientId));
    };
    const mailsTo = () => {
      const counts = new Map<string, number>();
      for (const message of mail!.received) for (const to of message.to) counts.set(to, (counts.get(to) ?? 0) + 1);
      return counts;
    };
    const paused = (i: string) => stripe!.callsFor(paymentsAccount(i)).some((call) => call.status === 200);
    const unsettled = () => {
      const mails = mailsTo();
      return suspensions.filter((i) => !mails.has(userEmail(i)) || !paused(i));
    };
    // The restricting decisions the store holds for the expected records and their users: each record's flags and
    // each user's suspensions. Their statements' puids are the events' ids.
    const decisions = async () => {
      const users = await database
        .collection<{ _id: string; clientId: string }>(COLLECTIONS.users)
        .find({}, { projection: { _id: 1, clientId: 1 } })
        .toArray();
      for (const user of users) userIds.set(user._id, user.clientId);
      const stored = await database
        .collection<{ _id: string; type: string; data: { status?: string; recordId?: string; userId?: string } }>(
          COLLECTIONS.events,
        )
        .find(
          { type: { $in: ['RecordModerated', 'UserStatusChanged'] } },
          { projection: { _id: 1, type: 1, 'data.status': 1, 'data.recordId': 1, 'data.userId': 1 } },
        )
        .toArray();
      const suspended = new Set(suspensions.map((i) => `u-${i}`));
      return stored
        .filter((event) =>
          event.type === 'RecordModerated'
            ? event.data.status === 'Flagged' && expected.has(recordIds.get(event.data.recordId ?? '') ?? '')
            : event.data.status === 'Suspended' && suspended.has(userIds.get(event.data.userId ?? '') ?? ''),
        )
        .map((event) => ({ id: event._id, type: event.type, subject: event.data.recordId ?? event.data.userId }));
    };
    const submittedPuids = () => {
      const counts = new Map<string, number>();
      for (const entry of tdb!.stored) {
        const puid = String(entry.statement.puid);
        counts.set(puid, (counts.get(puid) ?? 0) + 1);
      }
      return counts;
    };
    const unsubmitted = async () => {
      const puids = submittedPuids();
      return (await decisions()).filter((decision) => !puids.has(decision.id));
    };

    // Everything settles, or the drain's deadline passes; then each kind of work is checked on its own.
    await waitFor(
      async () =>
        (await missingRecords()).length === 0 &&
        missingWebhooks().length === 0 &&
        unsettled().length === 0 &&
        (await unsubmitted()).length === 0,
      { timeoutMs: DRAIN_MS, intervalMs: 1000, what: 'everything accepted to be done' },
    ).catch(() => undefined);
    note(Date.now() >= drainDeadline ? 'drain deadline passed' : 'everything done');

    const problems: string[] = [];
    const absentRecords = await missingRecords();
    const absentWebhooks = missingWebhooks();
    const unsettledSuspensions = unsettled();
    const absentStatements = await unsubmitted();
    const allDecisions = await decisions();

    /** What the store and the topics hold of requests that did not end as expected. */
    const evidenceOf = async (clientIds: string[]) => {
      const evidence = await Promise.all(
        clientIds.slice(0, 5).map(async (clientId) => {
          const record = await database
            .collection<{ _id: string; status?: string; moderationId?: string }>(COLLECTIONS.records)
            .findOne({ clientId }, { projection: { _id: 1, status: 1, moderationId: 1 } });
          const stream = record ? `record-${record._id}` : '';
          const streamEvents = await database
            .collection<{ _id: string; type: string; version: number; slot?: string }>(COLLECTIONS.events)
            .find({ stream }, { projection: { _id: 1, type: 1, version: 1, slot: 1 } })
            .toArray();
          const ids = streamEvents.map((event) => event._id);
          // The outbox markers of the slots its events were appended in (and copies of them, from a replay).
          const slots = streamEvents.flatMap((event) => (event.slot ? [event.slot] : []));
          const outbox = await database
            .collection<{ _id: string; stream?: string }>(COLLECTIONS.outbox)
            .countDocuments({ $or: [{ stream }, { _id: { $in: slots } }] });
          const deliveries = await database
            .collection(COLLECTIONS.deliveries)
            .find(
              { eventId: { $in: ids } },
              { projection: { state: 1, attemptCount: 1, eventId: 1, due: 1, dueAt: 1, leaseUntil: 1 } },
            )
            .toArray();
          return { sent: expected.get(clientId), record, events: streamEvents, outbox, deliveries };
        }),
      );
      const wanted = new Set(evidence.flatMap((item) => item.events.map((event) => event._id)));
      const onTopic = await eventsOnTopic(brokers, eventsTopic, wanted).catch(
        (readErr: Error) => `unread: ${readErr.message}`,
      );
      // The first accepted ingest, as a control that the topic is read and matched.
      const control = [...load.accepted.keys()][0];
      const clients = new Set([...clientIds.slice(0, 5), ...(control ? [control] : [])]);
      const commands = await commandsOnTopics(brokers, prefix, `${prefix}moderator`, clients).catch(
        (readErr: Error) => `unread: ${readErr.message}`,
      );
      // What the moderators logged while handling those commands (their log lines name partition and offset).
      const handled = new Set(
        (typeof commands === 'string' ? [] : commands.ingest)
          .filter((entry) => clientIds.slice(0, 5).some((clientId) => entry.startsWith(`${clientId}@`)))
          .map((entry) => entry.slice(entry.indexOf('@') + 1)),
      );
      const moderatorLogs = services
        .filter(({ name }) => name === 'moderator')
        .flatMap(({ service }, k) =>
          service
            .logs()
            .map((line) => ({ line, where: `${String(line.partition)}:${String(line.offset)}` }))
            .filter(({ where }) => handled.has(where))
            .map(({ line, where }) => {
              const err = line.err as { type?: string; message?: string } | undefined;
              const at = ((Number(line.time) - started) / 1000).toFixed(1);
              return `moderator ${k + 1} ${at}s ${where} ${String(line.msg)} ${err?.type ?? ''} ${err?.message ?? ''}`;
            }),
        );
      // How far the notifiers' groups (webhooks; statements) have read the events topic.
      const notifiersCommitted = await Promise.all(
        [`${prefix}notifier`, `${prefix}notifier-tdb`].map((groupId) =>
          committedOffsets(brokers, groupId, eventsTopic).catch((readErr: Error) => [`unread: ${readErr.message}`]),
        ),
      );
      return JSON.stringify({ evidence, onTopic, commands, moderatorLogs, notifiersCommitted });
    };
    if (absentRecords.length > 0) {
      problems.push(
        `${absentRecords.length} of ${expected.size} accepted ingests and answered /moderate calls have no stored ` +
          `moderation: ${await evidenceOf(absentRecords)}`,
      );
    }
    const lostWebhooks = absentWebhooks.filter((clientId) => !absentRecords.includes(clientId));
    if (lostWebhooks.length > 0) {
      problems.push(
        `${lostWebhooks.length} stored moderations have no record webhook: ${await evidenceOf(lostWebhooks)}`,
      );
    }
    if (unsettledSuspensions.length > 0) {
      // Where each unsettled suspension stands: the user's status, its email's and its payment action's state.
      const mails = mailsTo();
      const rows = await Promise.all(
        unsettledSuspensions.slice(0, 5).map(async (i) => {
          const user = await database.collection<UserDoc>(COLLECTIONS.users).findOne({ clientId: `u-${i}` });
          const email = user
            ? await database.collection<EmailMessageDoc>(COLLECTIONS.emailMessages).findOne({ userId: user._id })
            : null;
          const action = user
            ? await database.collection<PaymentActionDoc>(COLLECTIONS.paymentActions).findOne({ userId: user._id })
            : null;
          return JSON.stringify({
            i,
            user: user?.status,
            mail: mails.get(userEmail(i)) ?? 0,
            email: email ? [email.state, email.skipReason, email.attemptCount, email.dueAt] : null,
            stripe: stripe!.callsFor(paymentsAccount(i)).map((call) => call.status),
            action: action ? [action.state, action.skipReason, action.attemptCount, action.lastError] : null,
          });
        }),
      );
      problems.push(
        `${unsettledSuspensions.length} of ${suspensions.length} suspensions lack their email or payment action, ` +
          `e.g. ${rows.join(' ')}`,
      );
    }
    if (absentStatements.length > 0) {
      const logs = await database
        .collection<TdbSubmissionDoc>(COLLECTIONS.tdbSubmissions)
        .find(
          { eventId: { $in: absentStatements.slice(0, 5).map((decision) => decision.id) } },
          { projection: { payload: 0 } },
        )
        .toArray();
      problems.push(
        `${absentStatements.length} of ${allDecisions.length} restricting decisions are not in the Transparency ` +
          `Database: ${JSON.stringify({ decisions: absentStatements.slice(0, 5), logs })}`,
      );
    }

    // Counted at most once each in the transparency report: a counter write sent again after its reply was lost adds
    // nothing twice. (A write that failed all its tries is missing, logged and counted: fewer is allowed.)
    const restrictions = await database.collection(COLLECTIONS.events).countDocuments({
      $or: [
        { type: 'RecordModerated', 'data.status': 'Flagged' },
        { type: 'UserStatusChanged', 'data.status': 'Suspended' },
      ],
    });
    const counters = await database
      .collection<{ counts?: { decisions?: unknown } }>(COLLECTIONS.transparencyCounts)
      .find({}, { projection: { 'counts.decisions': 1 } })
      .toArray();
    const leaves = (node: unknown): number =>
      typeof node === 'number'
        ? node
        : node && typeof node === 'object'
          ? Object.values(node).reduce((sum: number, child) => sum + leaves(child), 0)
          : 0;
    const counted = counters.reduce((sum, doc) => sum + leaves(doc.counts?.decisions), 0);
    if (counted > restrictions) {
      problems.push(
        `${counted} restricting decisions in the transparency counts, more than the ${restrictions} stored`,
      );
    }

    // Once each: webhook ids with one body, repeats bounded; one email per suspension but for repeats bounded; one
    // payment action per suspension under one idempotency key; one stored statement per decision.
    const byId = new Map<string, Set<string>>();
    for (const webhook of receiver.received) {
      const id = String(webhook.headers['webhook-id']);
      const bodies = byId.get(id) ?? new Set<string>();
      bodies.add(webhook.body);
      byId.set(id, bodies);
    }
    const webhookRepeats = receiver.received.length - byId.size;
    const twoBodies = [...byId].filter(([, bodies]) => bodies.size > 1).map(([id]) => id);
    if (twoBodies.length > 0) problems.push(`webhook ids sent with two bodies: ${twoBodies.slice(0, 5).join(', ')}`);
    if (webhookRepeats > MAX_WEBHOOK_REPEATS) {
      problems.push(`${webhookRepeats} webhooks repeated, more than ${MAX_WEBHOOK_REPEATS}`);
    }
    const twoIds = [...webhooksByClient()].filter(([, ids]) => ids.size > 1).map(([clientId]) => clientId);
    if (twoIds.length > 0) problems.push(`records with two record webhook ids: ${twoIds.slice(0, 5).join(', ')}`);
    const mails = mailsTo();
    const emailRepeats = suspensions.reduce((n, i) => n + Math.max(0, (mails.get(userEmail(i)) ?? 0) - 1), 0);
    if (emailRepeats > MAX_EMAIL_REPEATS)
      problems.push(`${emailRepeats} emails repeated, more than ${MAX_EMAIL_REPEATS}`);
    const users = new Map([...userIds].map(([id, clientId]) => [clientId, id]));
    const actions = await database
      .collection<{ _id: string; userId: string }>(COLLECTIONS.paymentActions)
      .find({}, { projection: { userId: 1 } })
      .toArray();
    const actionsPerUser = new Map<string, number>();
    for (const action of actions) actionsPerUser.set(action.userId, (actionsPerUser.get(action.userId) ?? 0) + 1);
    const actionsOf = (i: string) => actionsPerUser.get(users.get(`u-${i}`) ?? '') ?? 0;
    const keysOf = (i: string) =>
      new Set(
        stripe!
          .callsFor(paymentsAccount(i))
          .filter((call) => call.status === 200)
          .map((call) => call.idempotencyKey ?? ''),
      ).size;
    const twiceActed = suspensions.filter((i) => actionsOf(i) > 1 || keysOf(i) > 1);
    if (twiceActed.length > 0) {
      problems.push(
        `suspensions with more than one payment action or idempotency key: ${twiceActed
          .slice(0, 5)
          .map((i) => `u-${i} (${actionsOf(i)} actions, ${keysOf(i)} keys)`)
          .join(', ')}`,
      );
    }
    const puids = submittedPuids();
    const storedTwice = [...puids].filter(([, n]) => n > 1).map(([puid]) => puid);
    if (storedTwice.length > 0) problems.push(`statements stored twice: ${storedTwice.slice(0, 5).join(', ')}`);
    if (tdb.refused.length > 0) {
      problems.push(`statements the Transparency Database refused: ${JSON.stringify(tdb.refused.slice(0, 3))}`);
    }

    // Nothing else failed: no answer but 5xx, no service died, and each fault really happened.
    const failures = Object.fromEntries(load.failures);
    const otherFailures = Object.keys(failures).filter((label) => !ALLOWED_FAILURE.test(label));
    if (otherFailures.length > 0) problems.push(`answers other than 5xx: ${otherFailures.join('; ')}`);
    if (load.unreachable[0]! > 0) problems.push(`${load.unreachable[0]} requests found the gateway unreachable`);
    for (const { name, service } of services) {
      const { exitCode, signalCode } = service.child;
      if (exitCode !== null || signalCode !== null) {
        problems.push(`a ${name} exited (${exitCode ?? signalCode}): ${service.output().slice(-1500)}`);
      }
    }
    const counts = relay.counts();
    if (counts.reset + counts.refused === 0 || counts.delayed === 0 || droppedTotal(counts) === 0) {
      problems.push(`a fault did nothing: ${JSON.stringify(counts)}`);
    }

    // What the services warned about, by message and process, with the first errors they logged.
    const warnings = services.map(({ name, service }) => {
      const byMessage: Record<string, number> = {};
      const errors: string[] = [];
      for (const line of service.logs()) {
        if (Number(line.level) < 40) continue;
        const message = String(line.msg);
        byMessage[message] = (byMessage[message] ?? 0) + 1;
        const err = line.err as { type?: string; message?: string } | undefined;
        // A store command that never got its answer: which one, to tell a hung store from a hung caller.
        const what = message === 'store command unanswered' ? `${String(line.command)} ${String(line.collection)}` : '';
        const sample = `${message}: ${what}${err?.type ?? ''} ${err?.message ?? ''}`;
        const telling = Number(line.level) >= 50 || what !== '';
        if (telling && errors.length < 3 && !errors.includes(sample)) errors.push(sample);
      }
      return `${name} ${JSON.stringify(byMessage)}${errors.length > 0 ? ` errors ${JSON.stringify(errors)}` : ''}`;
    });
    process.stdout.write(
      `store chaos: ${Math.round((Date.now() - started) / 1000)} s (load ${Math.round((loadEnded - started) / 1000)} s); ` +
        `relay ${JSON.stringify(counts)}; accepted ${load.accepted.size}, answered ${load.answered.size}, ` +
        `failed ${JSON.stringify(failures)}; records missing ${absentRecords.length}; webhooks ` +
        `${receiver.received.length} received, ${byId.size} ids, ${webhookRepeats} repeats, ${lostWebhooks.length} ` +
        `missing, ${refusedWebhooks} refused while the receiver was down; suspensions ${suspensions.length}, emails ${mail.received.length} (${emailRepeats} repeats), Stripe ` +
        `calls ${stripe.calls.length}, unsettled ${unsettledSuspensions.length}, SMTP connection errors ` +
        `${mail.errors.length}; decisions ${allDecisions.length} (${restrictions} stored, ${counted} counted), ` +
        `statements ${tdb.stored.length} stored (${puids.size} puids), ${tdb.repeats.length} sent again after they ` +
        `were stored, ${absentStatements.length} missing; ${events.map((e) => `${e.at}s ${e.what}`).join(', ')}\n` +
        `store chaos: warnings ${warnings.join('; ')}\n` +
        (problems.length > 0 ? `store chaos: problems:\n${problems.map((p) => `- ${p}`).join('\n')}\n` : ''),
    );

    expect(load.accepted.size).toBeGreaterThan(200);
    expect(load.answered.size).toBeGreaterThan(50);
    expect(refusedWebhooks).toBeGreaterThan(0);
    expect(parkedWhileDown).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  }, 600_000);
});
