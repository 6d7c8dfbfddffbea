import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { COLLECTIONS, type EmailMessageDoc, type PaymentActionDoc, type UserDoc } from '@vigil/proto';
import { MongoClient } from 'mongodb';
import { startKafkaCluster, type KafkaCluster } from '../local/kafka';
import { ensureTopics } from '../local/topics';
import { startStripe, type StripeServer } from '../test-support/stripe';
import { Load, paymentsAccount, userEmail } from './load';
import { freePortSync } from './ports';
import { createTenantKey, startMailReceiver, startReceiver } from './support';
import { commandsOnTopics, eventsOnTopic } from './topic-evidence';
import { loggedPort, spawnService, testServers, uniqueName, waitFor, type ServiceProcess } from '../test-support';

// DESIGN §2 and §8 with every service as two replicas and Kafka as three nodes: while ingests and /moderate calls go
// through both gateways at a steady pace, one moderator, one notifier, one gateway and one Kafka node are SIGKILLed in
// turn and started again. Afterwards every accepted ingest (202) and answered /moderate (200) is a stored moderation
// with its webhook received; a webhook id never carries two bodies; repeats are bounded by the attempts a killed
// notifier had in flight; each user suspension sent its email and paused payments once; and no request failed with a
// 5xx other than the 503 named below.
//
// Kafka is a cluster this test starts (deploy/local/kafka.js, the same jars as `npm test`'s broker) with replication
// factor 3 and min.insync.replicas 2; the store is the run's (MONGO_URL), in a database of its own.

/** Requests a second, alternating between the gateways; two in three are ingests, one in three /moderate. */
const RATE = 15;
/** Every fifth record is profane and has a user of its own, so it ends Flagged and suspends that user. */
const PROFANE_EVERY = 5;
/** The burst of ingests that gives the moderators a backlog when one of them is killed (as in a traffic spike). */
const BURST = 150;
/** Deadline of the drain after the load, long enough for a rebalance after a SIGKILL (session timeout below). */
const DRAIN_MS = 90_000;
/**
 * The consumers' session timeout in this test: a killed moderator's or notifier's partitions wait this long for the
 * group to hand them on. Set here so the test's timing does not follow the services' default.
 */
const SESSION_TIMEOUT_MS = '10000';
/** Attempts one notifier has in flight to one endpoint: what its SIGKILL can leave delivered but not recorded. */
const DELIVERIES_IN_FLIGHT = 16;
const EMAILS_IN_FLIGHT = 8;

/**
 * The 5xx answers allowed, by message. An ingest whose Kafka write failed while the cluster moved the partition
 * leaders of a killed node: the command was not acknowledged, so it is not accepted. A /moderate whose deadline passed
 * while the surviving moderator took the killed one's work (the burst, on a busy machine): not answered, so not counted
 * as answered, at most MAX_TIMED_OUT_SHARE of the /moderate calls. A /moderate call in flight on a moderator when it was
 * killed is sent again to the other one by the gateway (its moderation id makes it apply once).
 */
const ALLOWED_5XX = new Set([
  '503 the command could not be stored, try again',
  '504 the moderator did not answer in time',
]);
const MAX_TIMED_OUT_SHARE = 0.05;

const servers = testServers();

describe('two replicas of every service and three Kafka nodes under SIGKILLs', () => {
  const db = uniqueName('e2e_chaos');
  const prefix = `${uniqueName('chaos')}.`;
  const kafkaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-chaos-kafka-'));
  const encryptionKey = randomBytes(32).toString('base64');
  // Ports the services keep across their restarts, chosen once the brokers hold theirs (so neither can take the other's).
  let grpcPorts: number[] = [];
  let httpPorts: number[] = [];
  const running = new Set<ServiceProcess>();
  /** Every process the test started, for the evidence of a failure. */
  const everStarted = new Set<{ name: string; process: ServiceProcess; startedAt: number }>();
  const mongo = new MongoClient(servers.mongoUrl);
  let cluster: KafkaCluster | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  let mail: Awaited<ReturnType<typeof startMailReceiver>> | undefined;
  let stripe: StripeServer | undefined;

  afterAll(async () => {
    await Promise.all([...running].map((service) => service.stop('SIGTERM')));
    await cluster?.stop();
    fs.rmSync(kafkaDir, { recursive: true, force: true });
    await receiver?.close();
    await mail?.close();
    await stripe?.close();
    await mongo
      .db(db)
      .dropDatabase()
      .catch(() => undefined);
    await mongo.close();
  });

  it('stores, delivers and acts on everything accepted, once', async () => {
    const started = Date.now();
    const events: Array<{ what: string; at: number }> = [];
    const note = (what: string) => {
      events.push({ what, at: Math.round((Date.now() - started) / 1000) });
      process.stdout.write(`chaos: ${events.at(-1)!.at} s ${what}\n`);
    };
    [cluster, receiver, mail, stripe] = await Promise.all([
      startKafkaCluster({ dir: kafkaDir, size: 3, heapMb: 256 }),
      startReceiver(),
      startMailReceiver(),
      startStripe(),
    ]);
    note('servers started');
    const brokers = cluster.brokers;
    await ensureTopics({ brokers, prefix, partitions: 6, replicationFactor: 3 });
    grpcPorts = [freePortSync(), freePortSync()];
    httpPorts = [freePortSync(), freePortSync()];

    const common = {
      MONGO_URL: servers.mongoUrl,
      MONGO_DB: db,
      KAFKA_BROKERS: brokers,
      KAFKA_TOPIC_PREFIX: prefix,
      KAFKA_TOPIC_PARTITIONS: '6',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    };
    const moderatorEnv = (k: number) => ({
      ...common,
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: String(grpcPorts[k]),
      KAFKA_GROUP_ID: `${prefix}moderator`,
      KAFKA_SESSION_TIMEOUT_MS: SESSION_TIMEOUT_MS,
    });
    // Short timeouts and leases, so a killed notifier's claimed work is taken over within the drain's deadline.
    const notifierEnv = () => ({
      ...common,
      KAFKA_GROUP_ID: `${prefix}notifier`,
      KAFKA_SESSION_TIMEOUT_MS: SESSION_TIMEOUT_MS,
      SECRETS_ENCRYPTION_KEY: encryptionKey,
      WEBHOOK_RETRY_SCHEDULE_S: '0.5,1,1,2,2,2,2',
      WEBHOOK_TIMEOUT_MS: '5000',
      DELIVERY_CONCURRENCY_PER_ENDPOINT: String(DELIVERIES_IN_FLIGHT),
      DELIVERY_LEASE_MARGIN_MS: '2000',
      DUE_BUCKET_MS: '1000',
      DUE_GRACE_MS: '2000',
      SMTP_URL: mail!.url,
      EMAIL_TIMEOUT_MS: '2000',
      EMAIL_POLL_MS: '200',
      EMAIL_CONCURRENCY: String(EMAILS_IN_FLIGHT),
      EMAIL_RETRY_SCHEDULE_S: '0.5,1,2,2,2',
      STRIPE_API_BASE_URL: stripe!.url,
      PAYMENTS_TIMEOUT_MS: '3000',
      PAYMENTS_POLL_MS: '200',
      PAYMENTS_RETRY_SCHEDULE_S: '0.5,1,2,2,2',
    });
    // Each gateway balances over both moderators (round robin over the list), skipping one that stops answering.
    const gatewayEnv = (k: number) => ({
      ...common,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(httpPorts[k]),
      MODERATOR_ADDRESS: `ipv4:${[grpcPorts[k], grpcPorts[1 - k]].map((port) => `127.0.0.1:${port}`).join(',')}`,
      RATE_LIMIT_POINTS: '0',
      SECRETS_ENCRYPTION_KEY: encryptionKey,
    });
    const start = (name: 'gateway' | 'moderator' | 'notifier', env: Record<string, string>) => {
      const service = spawnService(name, env);
      everStarted.add({ name, process: service, startedAt: Math.round((Date.now() - started) / 1000) });
      running.add(service);
      void service.exited.then(() => running.delete(service));
      return service;
    };
    // Six processes and three brokers start at once beside the suite's other files: on a busy 2-core machine a start
    // has taken over a minute. A process that never gets there is reported with the end of its output.
    const listening = (service: ServiceProcess, msg: string) =>
      loggedPort(service, msg, 'port', 180_000).catch((err: Error) => {
        throw new Error(`${err.message}; its last output: ${service.output().slice(-1500)}`);
      });
    note('topics created');
    const moderators = [start('moderator', moderatorEnv(0)), start('moderator', moderatorEnv(1))];
    await Promise.all(moderators.map((m) => listening(m, 'grpc server listening')));
    const notifiers = [start('notifier', notifierEnv()), start('notifier', notifierEnv())];
    const gateways = [start('gateway', gatewayEnv(0)), start('gateway', gatewayEnv(1))];
    await Promise.all([
      ...notifiers.map((n) => listening(n, 'admin server listening')),
      ...gateways.map((g) => listening(g, 'http server listening')),
    ]);

    note('services started');
    const key = await createTenantKey(common, uniqueName('tenant'));
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const api = (k: number) => `http://127.0.0.1:${httpPorts[k]}/api/v1`;
    const endpoint = await fetch(`${api(0)}/webhook-endpoints`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(endpoint.status).toBe(201);
    const settings = await fetch(`${api(1)}/settings`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({
        emails: { enabled: true },
        payments: { stripeSecretKey: `sk_test_${randomBytes(18).toString('hex')}` },
      }),
    });
    expect(settings.status).toBe(200);

    // The outcome of every request, by clientId.
    const load = new Load({ api, gateways: 2, headers, profaneEvery: PROFANE_EVERY, started });
    const { accepted, answered, unreachable, failures } = load;
    load.start(RATE);
    const after = (n: number, what: string) => load.after(n, what);
    const kill = async (service: ServiceProcess) => {
      service.child.kill('SIGKILL');
      await service.exited;
    };
    try {
      await after(60, 'the first requests');

      // 1. A moderator, while both work through a burst of ingests.
      const burstStart = load.completed;
      const burst = Array.from({ length: BURST }, (_, j) => load.send('ingest', j % 2));
      await after(burstStart + BURST / 2, 'half the burst answered');
      await kill(moderators[0]!);
      note('moderator 1 killed');
      moderators[0] = start('moderator', moderatorEnv(0));
      await Promise.all(burst);
      await listening(moderators[0], 'grpc server listening');
      note('moderator 1 restarted');

      // 2. A notifier, with deliveries in flight.
      await after(load.completed + 75, 'load after the moderator restart');
      await kill(notifiers[0]!);
      note('notifier 1 killed');
      notifiers[0] = start('notifier', notifierEnv());
      await listening(notifiers[0], 'admin server listening');
      note('notifier 1 restarted');

      // 3. A gateway: its clients' requests fail at the connection level until it is back on its port.
      await after(load.completed + 75, 'load after the notifier restart');
      const refusedBefore = unreachable[1]!;
      await kill(gateways[1]!);
      note('gateway 2 killed');
      await waitFor(() => unreachable[1]! >= refusedBefore + 5, {
        timeoutMs: 30_000,
        what: 'requests to the killed gateway',
      });
      gateways[1] = start('gateway', gatewayEnv(1));
      await listening(gateways[1], 'http server listening');
      note('gateway 2 restarted');

      // 4. A Kafka node: its partitions get new leaders; the load goes on with two nodes, then it comes back.
      await after(load.completed + 75, 'load after the gateway restart');
      const node = cluster.nodes[1]!;
      await node.kill();
      note(`Kafka node ${node.id} killed`);
      await after(load.completed + 75, 'load with a Kafka node down');
      await node.start();
      note(`Kafka node ${node.id} restarted`);
      await after(load.completed + 75, 'load after the Kafka node restart');
    } finally {
      await load.stop();
    }
    const loadEnded = Date.now();
    note('load ended');

    // Everything accepted or answered is stored with a moderation.
    const expected = load.expected();
    const recordIds = new Map<string, string>(); // record id → clientId, from the stored records
    const database = mongo.db(db);
    const missing = async () => {
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
    /** What the store and the events topic hold of requests that did not end as expected, for the failure message. */
    const evidenceOf = async (clientIds: string[]) => {
      // What the store knows of each: the request, the record, its stream's events, outbox copies and deliveries.
      const evidence = await Promise.all(
        clientIds.slice(0, 5).map(async (clientId) => {
          const record = await database
            .collection<{ _id: string; status?: string; moderationId?: string }>(COLLECTIONS.records)
            .findOne({ clientId }, { projection: { _id: 1, status: 1, moderationId: 1 } });
          const stream = record ? `record-${record._id}` : '';
          const events = await database
            .collection<{ _id: string; type: string; version: number; slot?: string }>(COLLECTIONS.events)
            .find({ stream }, { projection: { _id: 1, type: 1, version: 1, slot: 1 } })
            .toArray();
          const ids = events.map((event) => event._id);
          // The outbox markers of the slots its events were appended in (and copies of them, from a replay).
          const slots = events.flatMap((event) => (event.slot ? [event.slot] : []));
          const outbox = await database
            .collection<{ _id: string; stream?: string }>(COLLECTIONS.outbox)
            .countDocuments({ $or: [{ stream }, { _id: { $in: slots } }] });
          const deliveries = await database
            .collection<{ state: string; attemptCount?: number; eventId: string }>(COLLECTIONS.deliveries)
            .find({ eventId: { $in: ids } }, { projection: { state: 1, attemptCount: 1, eventId: 1 } })
            .toArray();
          return { sent: expected.get(clientId), record, events, outbox, deliveries };
        }),
      );
      // And whether their events reached the events topic (the relay) or not (then the notifier is cleared).
      const wanted = new Set(evidence.flatMap((item) => item.events.map((event) => event._id)));
      const onTopic = await eventsOnTopic(cluster!.brokers, `${prefix}vigil.events.v1`, wanted).catch(
        (readErr: Error) => `unread: ${readErr.message}`,
      );
      // And where their commands are: on the ingest topic (and whether the moderators' group committed past them), on
      // the dead-letter topic.
      // The first accepted ingest, as a control that the topic is read and matched.
      const control = [...accepted.keys()][0];
      const clients = new Set([...clientIds.slice(0, 5), ...(control ? [control] : [])]);
      const commands = await commandsOnTopics(cluster!.brokers, prefix, `${prefix}moderator`, clients).catch(
        (readErr: Error) => `unread: ${readErr.message}`,
      );
      // The gateways' failed Kafka sends (answered 503), by process and time.
      const sendFailures = [...everStarted]
        .filter((service) => service.name === 'gateway')
        .map((service) => ({
          startedAt: service.startedAt,
          failures: service.process
            .logs()
            .filter((line) => line.msg === 'kafka send failed')
            .map((line) => `${((Number(line.time) - started) / 1000).toFixed(1)}s ${String(line.commands)}`),
        }));
      // What the notifiers warned about, by message and process.
      const notifierWarnings = [...everStarted]
        .filter((service) => service.name === 'notifier')
        .map((service) => {
          const counts: Record<string, number> = {};
          for (const line of service.process.logs()) {
            if (Number(line.level) < 40) continue;
            const key = String(line.msg);
            counts[key] = (counts[key] ?? 0) + 1;
          }
          return { startedAt: service.startedAt, counts };
        });
      return JSON.stringify({ evidence, onTopic, commands, sendFailures, notifierWarnings });
    };
    await waitFor(async () => (await missing()).length === 0, {
      timeoutMs: DRAIN_MS,
      intervalMs: 1000,
      what: 'a stored moderation for every accepted ingest and answered /moderate',
    }).catch(async (err: Error) => {
      const absent = await missing();
      throw new Error(`${err.message}: ${absent.length} of ${expected.size} missing: ${await evidenceOf(absent)}`);
    });

    note('every record moderated');

    // Every one of them has its record webhook, one logical delivery (webhook id) each.
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
    await waitFor(() => [...expected.keys()].every((clientId) => webhooksByClient().has(clientId)), {
      timeoutMs: DRAIN_MS,
      intervalMs: 1000,
      what: 'a record webhook for every accepted ingest and answered /moderate',
    }).catch(async (err: Error) => {
      const have = webhooksByClient();
      const absent = [...expected.keys()].filter((c) => !have.has(c));
      const evidence = await evidenceOf(absent);
      throw new Error(`${err.message}: ${absent.length} missing: ${evidence}`);
    });

    note('every record webhook received');

    // Each suspended user (one per profane record) got its email and its payment pause.
    const decisions = load.suspensions();
    const mailsTo = new Map<string, number>();
    const countMail = () => {
      mailsTo.clear();
      for (const message of mail!.received) for (const to of message.to) mailsTo.set(to, (mailsTo.get(to) ?? 0) + 1);
    };
    const paused = (i: string) => stripe!.callsFor(paymentsAccount(i)).some((call) => call.status === 200);
    const unsettled = () => {
      countMail();
      return decisions.filter((i) => !mailsTo.has(userEmail(i)) || !paused(i));
    };
    await waitFor(() => unsettled().length === 0, {
      timeoutMs: DRAIN_MS,
      intervalMs: 1000,
      what: 'an email and a payment action for every suspension',
    }).catch(async (err: Error) => {
      // Where each unsettled suspension stands: the user's status, its email's and its payment action's state.
      const rows = await Promise.all(
        unsettled()
          .slice(0, 5)
          .map(async (i) => {
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
              mail: mailsTo.get(userEmail(i)) ?? 0,
              email: email ? [email.state, email.skipReason, email.attemptCount] : null,
              stripe: stripe!.callsFor(paymentsAccount(i)).map((call) => call.status),
              action: action ? [action.state, action.skipReason, action.attemptCount, action.lastError] : null,
            });
          }),
      );
      throw new Error(`${err.message}: ${unsettled().length} of ${decisions.length} unsettled, e.g. ${rows.join(' ')}`);
    });

    note('every email and payment action done');

    const byId = new Map<string, Set<string>>();
    for (const webhook of receiver.received) {
      const id = String(webhook.headers['webhook-id']);
      const bodies = byId.get(id) ?? new Set<string>();
      bodies.add(webhook.body);
      byId.set(id, bodies);
    }
    const duplicates = receiver.received.length - byId.size;
    const emailDuplicates = decisions.reduce((n, i) => n + (mailsTo.get(userEmail(i))! - 1), 0);
    const stripeKeys = new Map<string, Set<string>>();
    for (const i of decisions) {
      const keys = new Set(
        stripe
          .callsFor(paymentsAccount(i))
          .filter((call) => call.status === 200)
          .map((call) => call.idempotencyKey ?? ''),
      );
      stripeKeys.set(i, keys);
    }
    const users = await database
      .collection<{ _id: string; clientId: string }>(COLLECTIONS.users)
      .find({}, { projection: { _id: 1, clientId: 1 } })
      .toArray();
    const userIds = new Map(users.map((user) => [user.clientId, user._id]));
    const actions = await database
      .collection<{ _id: string; userId: string }>(COLLECTIONS.paymentActions)
      .find({}, { projection: { userId: 1 } })
      .toArray();
    const actionsPerUser = new Map<string, number>();
    for (const action of actions) actionsPerUser.set(action.userId, (actionsPerUser.get(action.userId) ?? 0) + 1);
    const actionsOf = (i: string) => actionsPerUser.get(userIds.get(`u-${i}`) ?? '') ?? 0;

    const allFailures = Object.fromEntries(failures);
    process.stdout.write(
      `chaos: ${Math.round((Date.now() - started) / 1000)} s (load ${Math.round((loadEnded - started) / 1000)} s); ` +
        `accepted ${accepted.size}, answered ${answered.size}, unreachable ${unreachable.join('+')}, ` +
        `failed ${JSON.stringify(allFailures)}; webhooks ${receiver.received.length} received, ${byId.size} ids, ` +
        `${duplicates} repeats; suspensions ${decisions.length}, emails ${mail.received.length} ` +
        `(${emailDuplicates} repeats), Stripe calls ${stripe.calls.length}; ${events.map((e) => `${e.at}s ${e.what}`).join(', ')}\n`,
    );

    expect(accepted.size).toBeGreaterThan(300);
    expect(answered.size).toBeGreaterThan(100);
    // The gateway's death was seen by its clients as such, not as error answers.
    expect(unreachable[1]).toBeGreaterThanOrEqual(5);
    expect(Object.keys(allFailures).filter((label) => !ALLOWED_5XX.has(label))).toEqual([]);
    expect(failures.get('504 the moderator did not answer in time') ?? 0).toBeLessThanOrEqual(
      Math.ceil(
        MAX_TIMED_OUT_SHARE * (answered.size + (failures.get('504 the moderator did not answer in time') ?? 0)),
      ),
    );
    // A webhook id always carries the same body; repeats come only from attempts the killed notifier had in flight.
    expect([...byId].filter(([, bodies]) => bodies.size > 1).map(([id]) => id)).toEqual([]);
    expect(duplicates).toBeLessThanOrEqual(DELIVERIES_IN_FLIGHT);
    for (const ids of webhooksByClient().values()) expect(ids.size).toBe(1);
    // One email per suspension, but for sends the killed notifier had in flight; one payment action per suspension,
    // applied under one idempotency key (Stripe acts once per key).
    expect(emailDuplicates).toBeLessThanOrEqual(EMAILS_IN_FLIGHT);
    expect(decisions.filter((i) => stripeKeys.get(i)!.size !== 1)).toEqual([]);
    expect(decisions.filter((i) => actionsOf(i) !== 1)).toEqual([]);
  }, 720_000);
});
