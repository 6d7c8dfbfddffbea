import { COLLECTIONS, HEADERS, type DomainEvent } from '@vigil/proto';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { adminPortOf, spawnService, testServers, waitFor, type ServiceProcess } from '../../../deploy/test-support';
import { startStoreRelay, type StoreRelay } from '../../../deploy/test-support/store-relay';
import { webhookIdOf } from '../../src/domain/webhook-events';
import { createReceiver, createWorld, recordModerated, type Receiver, type Tenant, type World } from './harness';

// Deliveries stored with their first attempt's outcome are written behind their batch (OutcomeWriter): one insert
// for the batches of a window, and each batch's offset committed only once its deliveries are written.

let world: World;
let hook: Receiver;
let admin: Admin;
let producer: Producer;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  world = await createWorld();
  hook = await createReceiver();
  const kafka = new Kafka({
    clientId: 'write-behind-test',
    brokers: testServers().kafkaBrokers,
    logLevel: logLevel.NOTHING,
  });
  admin = kafka.admin();
  producer = kafka.producer();
  await Promise.all([admin.connect(), producer.connect()]);
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  await Promise.all([admin.disconnect(), producer.disconnect()]);
  await hook.close();
  await world.close();
});

/** A notifier in its own process, on `mongoUrl` (the store, or a relay to it). */
function spawnNotifier(env: Record<string, string>, mongoUrl = testServers().mongoUrl): ServiceProcess {
  const child = spawnService('notifier', {
    ...world.env,
    // A first attempt's wait that holds on a busy machine: the delivery is stored once the receiver answered.
    DELIVERY_FIRST_ATTEMPT_WAIT_MS: '5000',
    ...env,
    MONGO_URL: mongoUrl,
    KAFKA_BROKERS: testServers().kafkaBrokers.join(','),
    ADMIN_PORT: '0',
  });
  processes.push(child);
  return child;
}

const webhookIds = (webhookId: string) =>
  hook.received.filter((request) => request.headers['webhook-id'] === webhookId);

/** The offset the notifiers' group committed on the events topic's partition the event went to (-1 if none). */
async function committedFor(event: DomainEvent): Promise<{ partition: number; offset: bigint }> {
  const [topic] = await admin.fetchOffsets({ groupId: world.env.KAFKA_GROUP_ID!, topics: [world.topics.events] });
  const partition = partitionOf(event);
  const entry = topic?.partitions.find((p) => p.partition === partition);
  return { partition, offset: BigInt(entry?.offset ?? '-1') };
}

/** Where the events' keys put each event: recorded as the test publishes them (the producer's partitioner). */
const partitions = new Map<string, number>();
const partitionOf = (event: DomainEvent) => partitions.get(event.id)!;

/** Publishes one event (as World.publish does) and notes its partition; returns its offset. */
async function publish(event: DomainEvent): Promise<bigint> {
  const [sent] = await producer.send({
    topic: world.topics.events,
    acks: -1,
    messages: [
      {
        key: event.stream,
        value: JSON.stringify(event),
        headers: { [HEADERS.eventId]: event.id, [HEADERS.eventType]: event.type },
      },
    ],
  });
  partitions.set(event.id, sent!.partition);
  return BigInt(sent!.baseOffset!);
}

/** A record whose partition has had its first batch since the notifier joined: its next events are read fresh. */
async function primed(tenant: Tenant, clientId: string) {
  const record = await tenant.record(clientId);
  const primer = recordModerated(tenant, record);
  await publish(primer);
  await waitFor(async () => (await world.deliveries({ eventId: primer.id, state: 'succeeded' })).length === 1, {
    what: 'the primer delivered',
    timeoutMs: 30_000,
  });
  return record;
}

describe('deliveries written behind their batch', () => {
  it('gathers the deliveries of events read one at a time into fewer inserts than deliveries', async () => {
    const tenant = world.tenant();
    await tenant.endpoint(hook.url);
    // A window that holds on a busy machine: the events below come within it.
    await world.start({ DELIVERY_FIRST_ATTEMPT_WAIT_MS: '5000', DELIVERY_WRITE_WINDOW_MS: '3000' });
    const record = await primed(tenant, 'gathered-1');
    const inserts = () => world.commandsOn(COLLECTIONS.deliveries).filter((name) => name === 'insert').length;
    const before = inserts();
    const events: DomainEvent[] = [];
    for (let i = 0; i < 5; i += 1) {
      const event = recordModerated(tenant, record, {
        status: i % 2 === 0 ? 'Compliant' : 'Flagged',
        previousStatus: i % 2 === 0 ? 'Flagged' : 'Compliant',
      });
      events.push(event);
      // A low rate: each event is published once the one before was sent, so each is a batch of its own.
      await world.publish(event);
      await waitFor(() => webhookIds(webhookIdOf(event.id)).length === 1, { what: 'the webhook sent' });
    }
    await waitFor(
      async () => (await world.deliveries({ tenantId: tenant.tenantId, state: 'succeeded' })).length === 6,
      { what: 'every delivery stored', timeoutMs: 30_000 },
    );
    expect(inserts() - before).toBeLessThan(events.length);
    expect(inserts() - before).toBeGreaterThan(0);
    // As if each had been inserted on its own: one attempt each, sent once.
    for (const event of events) {
      const [doc] = await world.deliveries({ eventId: event.id });
      expect(doc).toMatchObject({ state: 'succeeded', attemptCount: 1, webhookId: webhookIdOf(event.id) });
      expect(doc!.attempts.map((attempt) => attempt.statusCode)).toEqual([200]);
      expect(webhookIds(webhookIdOf(event.id))).toHaveLength(1);
    }
    await world.notifier!.stopIntake();
    await world.notifier!.drain();
    world.notifier = undefined;
  });

  it('commits no offset past a delivery whose insert the store took but never confirmed, and loses none', async () => {
    const relay: StoreRelay = await startStoreRelay({ mongoUrl: testServers().mongoUrl, delayMs: 0 });
    try {
      const tenant = world.tenant();
      await tenant.endpoint(hook.url);
      const notifier = spawnNotifier({ DELIVERY_WRITE_WINDOW_MS: '1000' }, relay.url);
      await adminPortOf(notifier);
      const record = await primed(tenant, 'dropped-1');
      const event = recordModerated(tenant, record, { status: 'Compliant', previousStatus: 'Flagged' });
      const webhookId = webhookIdOf(event.id);
      // The receiver has the webhook: from then on, the store runs each write and its reply is lost, for the whole
      // window and after.
      hook.handler = (_req, res, received) => {
        if (received.headers['webhook-id'] === webhookId) relay.setFault('drop');
        res.writeHead(200).end();
      };
      const offset = await publish(event);
      await waitFor(() => (relay.counts().dropped.insert ?? 0) >= 3, {
        what: 'the insert taken, its reply lost, and tried again',
        timeoutMs: 30_000,
      });
      // The delivery is in the store, but the notifier never heard so: the event's offset is not committed.
      expect(await world.deliveries({ eventId: event.id })).toHaveLength(1);
      expect((await committedFor(event)).offset).toBeLessThanOrEqual(offset);
      relay.setFault(undefined);
      hook.handler = (_req, res) => res.writeHead(200).end();
      await waitFor(async () => (await committedFor(event)).offset > offset, {
        what: 'the offset committed once the insert is confirmed',
        timeoutMs: 30_000,
      });
      const [doc] = await world.deliveries({ eventId: event.id });
      expect(doc).toMatchObject({ state: 'succeeded', attemptCount: 1 });
      expect(webhookIds(webhookId)).toHaveLength(1);
      expect(await notifier.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    } finally {
      relay.setFault(undefined);
      await relay.close();
    }
  });

  it('sends another tenant’s webhook while a receiver holds its first attempt: the batch does not wait for it', async () => {
    // The receiver answers its first request (the primer), then holds each request until the notifier's timeout.
    let requests = 0;
    let open = 0;
    const holding = await createReceiver((_req, res) => {
      requests += 1;
      if (requests === 1) return void res.writeHead(200).end('ok');
      open += 1;
      res.on('close', () => (open -= 1));
    });
    // The attempt times out within the first attempt's wait: a batch that waited would wait until the timeout.
    const notifier = spawnNotifier({ WEBHOOK_TIMEOUT_MS: '4000' });
    let stopped = false;
    try {
      const slowTenant = world.tenant();
      await slowTenant.endpoint(holding.url);
      const tenant = world.tenant();
      await tenant.endpoint(hook.url);
      await adminPortOf(notifier);
      const slowRecord = await primed(slowTenant, 'held-1');
      const record = await primed(tenant, 'beside-held-1');
      const slowEvent = recordModerated(slowTenant, slowRecord, { status: 'Compliant', previousStatus: 'Flagged' });
      await publish(slowEvent);
      await waitFor(() => open === 1, { what: 'the first attempt held by its receiver' });
      const event = recordModerated(tenant, record, { status: 'Compliant', previousStatus: 'Flagged' });
      await publish(event);
      await waitFor(() => webhookIds(webhookIdOf(event.id)).length === 1, { what: 'the other tenant’s webhook' });
      // Sent while the held request was still open: no batch waited for it.
      expect(open).toBe(1);
      // The held delivery is stored once its attempt ended (the timeout), with that attempt (its retries may follow).
      await waitFor(async () => (await world.deliveries({ eventId: slowEvent.id })).length === 1, {
        what: 'the held delivery stored',
        timeoutMs: 30_000,
      });
      const [held] = await world.deliveries({ eventId: slowEvent.id });
      expect(held!.attempts[0]?.error).toBe('timeout');
      stopped = true;
      expect(await notifier.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    } finally {
      // A notifier left running would share the group with the next test's.
      if (!stopped) await notifier.stop('SIGKILL');
      await holding.close();
    }
  });

  it('sends again, after a SIGKILL, a webhook whose delivery waited to be written: same webhook id and bytes', async () => {
    const tenant = world.tenant();
    await tenant.endpoint(hook.url);
    // A window longer than the test: the delivery is still waiting when the process dies.
    const notifier = spawnNotifier({ DELIVERY_WRITE_WINDOW_MS: '5000' });
    await adminPortOf(notifier);
    const record = await primed(tenant, 'killed-behind-1');
    const event = recordModerated(tenant, record, { status: 'Compliant', previousStatus: 'Flagged' });
    const webhookId = webhookIdOf(event.id);
    const offset = await publish(event);
    // Sent first (the batch says so as it is done), answered, and handed to the writer, which waits for its window.
    await waitFor(
      () =>
        notifier.logs().some((line) => line.msg === 'deliveries created' && line.sentFirst === 1) &&
        webhookIds(webhookId).length === 1,
      { what: 'the webhook delivered, its delivery waiting to be written' },
    );
    expect(webhookIds(webhookId)).toHaveLength(1);
    notifier.child.kill('SIGKILL');
    await notifier.exited;
    expect(await world.deliveries({ eventId: event.id })).toEqual([]);
    expect((await committedFor(event)).offset).toBeLessThanOrEqual(offset);

    // Read again by the next notifier, claimed first (nothing is stored), and sent again.
    spawnNotifier({});
    await waitFor(async () => (await world.deliveries({ eventId: event.id, state: 'succeeded' })).length === 1, {
      what: 'the webhook delivered again',
      timeoutMs: 60_000,
    });
    const sent = webhookIds(webhookId);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.body).toBe(sent[0]!.body);
    const [doc] = await world.deliveries({ eventId: event.id });
    expect(doc!.attempts.map((attempt) => attempt.statusCode)).toEqual([200]);
  });
});
