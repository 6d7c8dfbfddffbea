import { COLLECTIONS, TenantVersions, type WebhookEndpointDoc } from '@vigil/proto';
import { MongoNetworkError, type Db } from 'mongodb';
import pino from 'pino';
import { deliveryIdOf, webhookIdOf } from '../domain/webhook-events';
import { markFirstRead } from '../kafka/first-read';
import { DeliveryStore, type DeliveryDoc } from '../store/delivery-store';
import type { EndpointStateStore } from '../store/endpoint-states';
import { random, SimConnection, SimStore, type SimCollection } from '../store/testing/sim-store';
import type { UpstreamReads } from '../store/upstream-reads';
import { DeliveryIntake } from './delivery-intake';
import type { EndpointCache } from './endpoint-cache';
import { FanOut } from './fan-out';
import type { HttpSender } from './http-sender';
import { DeliveryScheduler } from './scheduler';
import { recordModerated } from '../../../deploy/test-support/events';
import { waitFor } from '../../../deploy/test-support';

const log = pino({ level: 'silent' });

const endpoint = (id: string, events: string[], tenantId = 'ten_1'): WebhookEndpointDoc =>
  ({
    _id: id,
    tenantId,
    url: `https://example.com/${id}`,
    events,
    enabled: true,
    secrets: [],
  }) as unknown as WebhookEndpointDoc;

/** A fan-out whose endpoint cache, projections and intake are in memory; what it takes in is recorded. */
function setup(endpoints: WebhookEndpointDoc[]) {
  const taken: DeliveryDoc[][] = [];
  const fresh: string[][] = [];
  const intake = {
    take: (docs: DeliveryDoc[], freshIds: ReadonlySet<string> = new Set()) => {
      taken.push(docs);
      fresh.push([...freshIds].sort());
      return Promise.resolve({
        inserted: new Set(docs.map((doc) => doc._id)),
        adopted: new Set<string>(),
        sentFirst: new Set<string>(),
      });
    },
  };
  // The projections are not there yet: bodies are left to the scheduler, unless the event carries its view.
  const reads = {
    record: () => Promise.resolve(null),
    user: () => Promise.resolve(null),
  } as unknown as UpstreamReads;
  const endpointReads: string[] = [];
  const cache = {
    active: (tenantId: string) => {
      endpointReads.push(tenantId);
      return Promise.resolve(endpoints.filter((e) => e.tenantId === tenantId));
    },
  } as unknown as EndpointCache;
  const fanOut = new FanOut({ endpoints: cache, versions: new TenantVersions(), reads, intake });
  return { fanOut, taken, fresh, deliveries: () => taken.flat(), endpointReads };
}

/** `rec_1` of tenant `ten_1` moderated Flagged with a reason and a user, as event `id`. */
const moderated = (id: string, data: Record<string, unknown> = {}, envelope: Record<string, unknown> = {}) =>
  recordModerated(
    { moderationId: `mod_${id}`, reasons: ['r'], rules: ['x'], userId: 'usr_1', ...data },
    { id, tenantId: 'ten_1', version: 3, ...envelope },
  );

describe('FanOut', () => {
  it('takes in one delivery per endpoint subscribed to the event, all with the event’s one webhook-id', async () => {
    const t = setup([
      endpoint('we_flagged', ['record.flagged']),
      endpoint('we_all', []),
      endpoint('we_users', ['user.suspended']),
      endpoint('we_other_tenant', [], 'ten_2'),
    ]);
    await t.fanOut.handle([moderated('evt_1')], log);
    expect(t.taken).toHaveLength(1);
    const docs = t.deliveries();
    expect(docs.map((doc) => doc._id).sort()).toEqual(
      [deliveryIdOf('evt_1', 'we_all'), deliveryIdOf('evt_1', 'we_flagged')].sort(),
    );
    for (const doc of docs) {
      expect(doc).toMatchObject({
        tenantId: 'ten_1',
        webhookId: webhookIdOf('evt_1'),
        eventId: 'evt_1',
        event: 'record.flagged',
        subjectId: 'mod_evt_1',
        state: 'pending',
      });
    }
  });

  it('takes in nothing for an event that changed no status, or one in test mode', async () => {
    const t = setup([endpoint('we_all', [])]);
    await t.fanOut.handle(
      [moderated('evt_same', { previousStatus: 'Flagged' }), moderated('evt_test', { testMode: true })],
      log,
    );
    expect(t.taken).toHaveLength(0);
  });

  it('makes one delivery of an event published twice in a batch', async () => {
    const t = setup([endpoint('we_all', [])]);
    await t.fanOut.handle([moderated('evt_1'), moderated('evt_1')], log);
    expect(t.deliveries()).toHaveLength(1);
  });

  it('reads the tenant’s endpoints once a batch, and again when an event carries a newer configuration version', async () => {
    const t = setup([endpoint('we_all', [])]);
    await t.fanOut.handle(
      [
        moderated('evt_1', {}, { configVersion: 1 }),
        moderated('evt_2', {}, { configVersion: 1 }),
        moderated('evt_3', {}, { configVersion: 2 }),
      ],
      log,
    );
    expect(t.endpointReads).toEqual(['ten_1', 'ten_1']);
    expect(t.deliveries()).toHaveLength(3);
  });

  it('builds the body from the event’s view when it has one, and leaves it to the scheduler otherwise', async () => {
    const t = setup([endpoint('we_all', [])]);
    const view = { record: { id: 'rec_1', clientId: 'post-1', status: 'Flagged' } };
    await t.fanOut.handle([moderated('evt_view', { view }), moderated('evt_bare')], log);
    const byEvent = new Map(t.deliveries().map((doc) => [doc.eventId, doc]));
    expect(byEvent.get('evt_bare')?.body).toBeUndefined();
    expect(JSON.parse(byEvent.get('evt_view')?.body ?? '{}')).toMatchObject({ event: 'record.flagged' });
  });
  it('names fresh the deliveries of events read for the first time, and of no event also read again in the batch', async () => {
    const t = setup([endpoint('we_all', [])]);
    const first = moderated('evt_first');
    const republishedFresh = moderated('evt_twice');
    markFirstRead(first);
    markFirstRead(republishedFresh);
    // evt_twice comes again in the batch, republished: its delivery may have been sent already.
    await t.fanOut.handle([first, moderated('evt_again'), republishedFresh, moderated('evt_twice')], log);
    expect(t.fresh).toEqual([[deliveryIdOf('evt_first', 'we_all')]]);
    expect(t.deliveries()).toHaveLength(3);
  });
  it('builds the same bytes for an event read again, its timestamp being the event’s', async () => {
    const view = { record: { id: 'rec_1', clientId: 'post-1', status: 'Flagged' } };
    const event = moderated('evt_view', { view }, { occurredAt: '2026-03-04T05:06:07.089Z' });
    const first = setup([endpoint('we_all', [])]);
    await first.fanOut.handle([event], log);
    const again = setup([endpoint('we_all', [])]);
    await again.fanOut.handle([structuredClone(event)], log);
    const [body] = first.deliveries().map((doc) => doc.body);
    expect(again.deliveries().map((doc) => doc.body)).toEqual([body]);
    expect(JSON.parse(body!)).toMatchObject({ timestamp: String(Date.parse('2026-03-04T05:06:07.089Z')) });
  });
});

describe('FanOut with the scheduler and a store that loses a reply', () => {
  const LEASE_MS = 1_000;

  /**
   * A fan-out taking deliveries in through a real intake, scheduler and delivery store over the in-memory store; the
   * deliveries' first insert lands and its reply is lost. `sends` counts the receiver's requests by webhook-id.
   */
  function world(endpointDoc: WebhookEndpointDoc) {
    const sim = new SimStore(random(1), { latency: false });
    const conn = new SimConnection(sim);
    let loseNextInsert = true;
    const db = {
      collection: (name: string): SimCollection => {
        const collection = conn.collection(name);
        if (name !== COLLECTIONS.deliveries) return collection;
        const insertMany = collection.insertMany.bind(collection);
        collection.insertMany = async (docs) => {
          const result = await insertMany(docs);
          if (!loseNextInsert) return result;
          loseNextInsert = false;
          throw new MongoNetworkError('reply lost');
        };
        return collection;
      },
    } as unknown as Db;
    const store = new DeliveryStore(db, { bucketMs: 1_000, graceMs: 500, resweepMs: 200 });
    const endpoints = {
      active: () => Promise.resolve([endpointDoc]),
      get: () => Promise.resolve({ endpoint: endpointDoc, state: null }),
      changed: () => undefined,
    } as unknown as EndpointCache;
    const sends = new Map<string, number>();
    const sender: HttpSender = {
      send: (_url, headers) => {
        const id = headers['webhook-id'] ?? '';
        sends.set(id, (sends.get(id) ?? 0) + 1);
        return Promise.resolve({ durationMs: 1, statusCode: 204 });
      },
      close: () => Promise.resolve(),
    };
    const scheduler = new DeliveryScheduler({
      store,
      endpointStates: {
        endpointFailed: (_endpoint: WebhookEndpointDoc, now: Date) => Promise.resolve(now),
        endpointSucceeded: () => Promise.resolve(undefined),
        disableEndpoint: () => Promise.resolve({}),
      } as unknown as EndpointStateStore,
      reads: {} as UpstreamReads,
      endpoints,
      sender,
      log,
      retryScheduleS: [5],
      retryAfterMaxMs: 10_000,
      disableAfterMs: 86_400_000,
      concurrency: 4,
      perEndpointConcurrency: 2,
      pollMs: 50,
      leaseMs: LEASE_MS,
      // The sender answers at once: the retry, made at once too, finds time for an attempt left on the lease.
      attemptMs: LEASE_MS / 2,
      projectionWaitMs: 0,
    });
    const intake = new DeliveryIntake(store, scheduler, () => scheduler.wake());
    const reads = { user: () => Promise.resolve(null) } as unknown as UpstreamReads;
    const fanOut = new FanOut({ endpoints, versions: new TenantVersions(), reads, intake });
    return { fanOut, scheduler, sends, stored: (id: string) => sim.docs(COLLECTIONS.deliveries).get(id) };
  }

  it('sends a delivery once, and logs no interrupted attempt, when its batch is tried again after the insert’s reply was lost', async () => {
    const signing = { secrets: [{ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', createdAt: new Date(0) }] };
    const w = world({ ...endpoint('we_all', []), ...signing });
    w.scheduler.start();
    try {
      const view = { record: { id: 'rec_1', clientId: 'post-1', status: 'Flagged' } };
      const batch = [moderated('evt_1', { view })];
      // The first try's insert landed leased, its reply lost: the batch fails and is handled again, built anew.
      await expect(w.fanOut.handle(batch, log)).rejects.toThrow('reply lost');
      await w.fanOut.handle(structuredClone(batch), log);
      const id = deliveryIdOf('evt_1', 'we_all');
      // Left to a take-over, the delivery would be sent only once its first lease ran out, and so within this deadline.
      const stored = await waitFor(() => (w.stored(id)?.state === 'succeeded' ? w.stored(id) : undefined), {
        timeoutMs: 10 * LEASE_MS,
        intervalMs: 20,
        what: 'the delivery succeeded',
      });
      expect(stored.attempts).toEqual([expect.objectContaining({ statusCode: 204 })]);
      expect(w.sends.get(webhookIdOf('evt_1'))).toBe(1);
    } finally {
      await w.scheduler.stop();
    }
  });
});
