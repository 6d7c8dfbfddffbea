import { COLLECTIONS } from '@vigil/proto';
import { MongoClient } from 'mongodb';
import { ulid } from 'ulid';
import { waitFor } from '../../../deploy/test-support';
import { DeliveryIntake } from '../../src/delivery/delivery-intake';
import type { DeliveryScheduler } from '../../src/delivery/scheduler';
import { DeliveryStore, type DeliveryDoc } from '../../src/store/delivery-store';
import { EndpointStateStore } from '../../src/store/endpoint-states';
import {
  createReceiver,
  createWorld,
  DUE_TIMING,
  dueDelivery,
  seedDue,
  testScheduler,
  type Receiver,
  type World,
} from './harness';

const BACKLOG = 240;
const FRESH = 60;

/** Two schedulers (two notifier processes, each with its own client) working one backlog of due deliveries. */
describe('two notifier schedulers on one backlog', () => {
  let world: World;
  let receiver: Receiver;
  const clients: MongoClient[] = [];
  const schedulers: DeliveryScheduler[] = [];
  const schedulerStores: DeliveryStore[] = [];

  beforeAll(async () => {
    world = await createWorld();
    receiver = await createReceiver();
  });

  afterAll(async () => {
    await Promise.all(schedulers.map((scheduler) => scheduler.stop()));
    await Promise.all(clients.map((client) => client.close()));
    await receiver.close();
    await world.close();
  });

  it('attempts every due delivery exactly once, and every delivery inserted while they run', async () => {
    const tenant = world.tenant();
    // Several endpoints, so per-endpoint capacity does not serialise the two workers.
    const endpoints = await Promise.all([0, 1, 2, 3].map(() => tenant.endpoint(receiver.url)));
    const now = new Date();
    const backlog = Array.from({ length: BACKLOG }, (_, index) =>
      dueDelivery(tenant.tenantId, endpoints[index % endpoints.length]!._id, now, { index }, `rec_${index}`),
    );
    await new DeliveryStore(world.db, DUE_TIMING).ensureIndexes();
    await seedDue(world.db, backlog);

    for (let n = 0; n < 2; n += 1) {
      const client = new MongoClient(process.env.MONGO_URL!);
      await client.connect();
      clients.push(client);
      const db = client.db(world.db.databaseName, { ignoreUndefined: true });
      const store = new DeliveryStore(db, DUE_TIMING);
      schedulerStores.push(store);
      schedulers.push(testScheduler(db, store));
    }
    for (const scheduler of schedulers) scheduler.start();
    // While both work the backlog, new deliveries arrive the way the consumer writes them: inserted already leased to
    // the first scheduler when it has a free slot (sent at once, no claim), pending otherwise, for either to take.
    const fresh = backlog.slice(0, FRESH).map((doc, index) => ({
      ...doc,
      _id: `dlv_${ulid()}`,
      webhookId: `msg_${ulid()}`,
      body: JSON.stringify({ event: 'record.flagged', fresh: index }),
      dueAt: new Date(),
    }));
    const intake = new DeliveryIntake(schedulerStores[0]!, schedulers[0], () => schedulers[0]!.wake());
    const inserts = await Promise.all(fresh.map((doc) => intake.take([{ ...doc }])));
    const adopted = inserts.filter(({ adopted }) => adopted.size === 1).length;

    await waitFor(
      async () =>
        (await world.db.collection<DeliveryDoc>(COLLECTIONS.deliveries).countDocuments({ state: 'succeeded' })) ===
        BACKLOG + FRESH,
      { timeoutMs: 90_000, what: 'every delivery succeeded' },
    );
    // Both paths were taken: some went straight to the first scheduler, some waited in the queue.
    expect(adopted).toBeGreaterThan(0);
    const perWebhook = new Map<string, number>();
    for (const entry of receiver.received) {
      const id = String(entry.headers['webhook-id']);
      perWebhook.set(id, (perWebhook.get(id) ?? 0) + 1);
    }
    const repeated = [...perWebhook].filter(([, count]) => count > 1);
    expect(repeated).toEqual([]);
    expect(perWebhook.size).toBe(BACKLOG + FRESH);
    const docs = await world.deliveries({ tenantId: tenant.tenantId });
    expect(docs.every((doc) => doc.attemptCount === 1)).toBe(true);
  });
});

describe('workers writing at once: endpoint health and inserts', () => {
  let world: World;

  beforeAll(async () => {
    world = await createWorld();
  });

  afterAll(async () => {
    await world.close();
  });

  it('records a new endpoint’s first outcomes however many attempts report them at once', async () => {
    const tenant = world.tenant();
    const [fresh, failing, gone] = await Promise.all([0, 1, 2].map(() => tenant.endpoint('http://127.0.0.1:9/')));
    const store = new EndpointStateStore(world.db);
    const now = new Date();
    // Several workers finishing attempts to an endpoint never seen before: each upserts its health document.
    await Promise.all([
      ...Array.from({ length: 10 }, () => store.endpointSucceeded(fresh!, null, now)),
      ...Array.from({ length: 10 }, () => store.endpointFailed(failing!, now)),
      ...Array.from({ length: 10 }, () => store.disableEndpoint(gone!, 'gone', now)),
    ]);
    expect(await store.endpointState(fresh!._id)).toMatchObject({ lastSuccessAt: now });
    expect(await store.endpointState(failing!._id)).toMatchObject({ failingSince: now });
    expect(await store.endpointState(gone!._id)).toMatchObject({ disabledReason: 'gone' });
  });

  it('inserts the new deliveries of concurrent callers in one command, each inserted by exactly one of them', async () => {
    const tenant = world.tenant();
    const endpoint = await tenant.endpoint('http://127.0.0.1:9/');
    const client = new MongoClient(process.env.MONGO_URL!, { monitorCommands: true });
    const inserts: number[] = [];
    client.on('commandStarted', (event) => {
      if (event.commandName === 'insert' && event.command.insert === COLLECTIONS.deliveries) {
        inserts.push((event.command.documents as unknown[]).length);
      }
    });
    try {
      const store = new DeliveryStore(client.db(world.db.databaseName, { ignoreUndefined: true }), DUE_TIMING);
      const now = new Date();
      const docs = Array.from({ length: 10 }, (_, index) => dueDelivery(tenant.tenantId, endpoint._id, now, { index }));
      // Ten callers at once, each with a delivery of its own; the last nine also with the first one's (an event
      // consumed twice), which only one of them may insert.
      const results = await Promise.all(
        docs.map((doc, index) => store.insertNew(index === 0 ? [doc] : [doc, structuredClone(docs[0]!)])),
      );
      expect(inserts).toEqual([19]);
      const insertedBy = results.flatMap((inserted) => [...inserted]);
      expect(insertedBy.sort()).toEqual(docs.map((doc) => doc._id).sort());
      expect(results[0]).toEqual(new Set([docs[0]!._id]));
      const stored = await world.db
        .collection<DeliveryDoc>(COLLECTIONS.deliveries)
        .countDocuments({ endpointId: endpoint._id });
      expect(stored).toBe(10);
    } finally {
      await client.close();
    }
  });
});

// Its own store: the deliveries the tests above leave pending are due too, and a claim takes whichever is due first.
describe('a claim from a stale read', () => {
  let world: World;

  beforeAll(async () => {
    world = await createWorld();
  });

  afterAll(async () => {
    await world.close();
  });

  it('leaves a delivery that another worker attempted and rescheduled since it was read', async () => {
    const tenant = world.tenant();
    const endpoint = await tenant.endpoint('http://127.0.0.1:9/');
    const now = new Date();
    const doc = dueDelivery(tenant.tenantId, endpoint._id, now, { stale: true });
    const first = new DeliveryStore(world.db, DUE_TIMING);
    const second = new DeliveryStore(world.db, DUE_TIMING);
    await first.ensureIndexes();
    await seedDue(world.db, [doc]);
    // The first worker reads the delivery as a candidate but has no room for it yet.
    expect(await first.claim(now, 60_000, 8, () => 0)).toEqual([]);
    // The second takes it with a lease that ends at once, attempts it and reschedules it an hour later.
    const [leased] = await second.claim(now, 1, 8, () => 8);
    expect(leased?._id).toBe(doc._id);
    const later = new Date(now.getTime() + 3_600_000);
    await second.recordAttempt(
      leased!,
      { at: now, durationMs: 1, error: 'network_error' },
      { state: 'pending', dueAt: later },
    );
    // With room now, the first claims from what it read: the second's lease is over, but the attempt it saw is done.
    expect(await first.claim(new Date(now.getTime() + 50), 60_000, 8, () => 8)).toEqual([]);
    const stored = await world.db.collection<DeliveryDoc>(COLLECTIONS.deliveries).findOne({ _id: doc._id });
    expect(stored).toMatchObject({ state: 'pending', dueAt: later, attemptCount: 1 });
  });
});
