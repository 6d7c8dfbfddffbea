import { COLLECTIONS } from '@vigil/proto';
import { waitFor } from '../../../deploy/test-support';
import type { DeliveryScheduler } from '../../src/delivery/scheduler';
import { DeliveryStore, type DeliveryDoc } from '../../src/store/delivery-store';
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

describe('a dead endpoint’s backlog', () => {
  let world: World;
  let receiver: Receiver;
  let scheduler: DeliveryScheduler | undefined;
  let down = true;

  beforeAll(async () => {
    world = await createWorld();
    receiver = await createReceiver((_req, res) => res.writeHead(down ? 503 : 200).end(down ? 'down' : 'ok'));
  });

  afterAll(async () => {
    await scheduler?.stop();
    await receiver.close();
    await world.close();
  });

  it('is parked while its breaker is open, and comes back at once when a probe is answered', async () => {
    const tenant = world.tenant();
    const endpoint = await tenant.endpoint(receiver.url);
    const docs = Array.from({ length: 100 }, (_, index) =>
      dueDelivery(tenant.tenantId, endpoint._id, new Date(), { index }),
    );
    const store = new DeliveryStore(world.db, DUE_TIMING);
    await store.ensureIndexes();
    await seedDue(world.db, docs);
    const deliveries = world.db.collection<DeliveryDoc>(COLLECTIONS.deliveries);
    scheduler = testScheduler(world.db, store, { retryScheduleS: [1, 1, 1, 1, 1, 1] });
    scheduler.start();

    // The first attempts fail, the breaker opens, and the backlog is moved an hour ahead, but for probes (one bucket
    // each) from the pause's end, further apart each time, up to a minute. Attempts that fail later are parked by later
    // parks, each placing one more probe at its pause's end (within a minute of it) and going on from the probes
    // already placed: past the coming minute, the probes are a minute apart.
    await waitFor(
      async () =>
        (await deliveries.countDocuments({ tenantId: tenant.tenantId, parked: true, state: 'pending' })) >= 80,
      { timeoutMs: 30_000, what: 'the backlog parked' },
    );
    const parked = await deliveries.find({ tenantId: tenant.tenantId, parked: true }).toArray();
    const bucketIn = (ms: number) => Math.floor((Date.now() + ms) / DUE_TIMING.bucketMs);
    expect(parked.filter((doc) => Number(doc.due) > bucketIn(3_500_000)).length).toBeGreaterThanOrEqual(20);
    const probes = parked
      .map((doc) => Number(doc.due))
      .filter((bucket) => bucket < bucketIn(3_500_000))
      .sort((a, b) => a - b);
    expect(probes.length).toBeGreaterThanOrEqual(20);
    expect(probes[0]).toBeLessThan(bucketIn(61_000));
    const gapsOf = (buckets: number[]) => buckets.slice(1).map((bucket, i) => bucket - buckets[i]!);
    expect(Math.max(...gapsOf(probes))).toBeLessThanOrEqual(61);
    const minuteOn = bucketIn(61_000);
    const comingMinute = probes.filter((bucket) => bucket < minuteOn);
    const later = probes.filter((bucket) => bucket >= minuteOn);
    // Not a probe a second: a few, further apart each time, and one per park.
    expect(comingMinute.length).toBeLessThan(15);
    expect(later.length).toBeGreaterThanOrEqual(10);
    for (const gap of gapsOf(later)) {
      expect(gap).toBeGreaterThanOrEqual(59);
      expect(gap).toBeLessThanOrEqual(61);
    }
    const requestsWhileDown = receiver.received.length;

    // The receiver answers again: the next probe (within a minute) succeeds and brings the whole backlog back, long
    // before its parked bucket.
    down = false;
    await waitFor(
      async () => (await deliveries.countDocuments({ tenantId: tenant.tenantId, state: 'succeeded' })) === docs.length,
      { timeoutMs: 90_000, what: 'every delivery of the backlog sent once the endpoint answers' },
    );
    expect(await deliveries.countDocuments({ tenantId: tenant.tenantId, parked: true })).toBe(0);
    // While it was down, the endpoint got the first attempts and probes, not an attempt per delivery and retry.
    expect(requestsWhileDown).toBeLessThan(docs.length);
  });
});
