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

/** The real store, whose outcome writes wait until the test lets them through. */
class HeldOutcomes extends DeliveryStore {
  held = 0;
  private open!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));

  override async recordAttempt(...args: Parameters<DeliveryStore['recordAttempt']>): Promise<boolean> {
    this.held += 1;
    await this.gate;
    return super.recordAttempt(...args);
  }

  letThrough(): void {
    this.open();
  }
}

describe('an endpoint’s delivery slots', () => {
  let world: World;
  let receiver: Receiver;
  let scheduler: DeliveryScheduler | undefined;
  let store: HeldOutcomes | undefined;
  let inFlight = 0;
  let mostInFlight = 0;

  beforeAll(async () => {
    world = await createWorld();
    // Answers after a short pause, counting the requests it holds at once.
    receiver = await createReceiver((_req, res) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      setTimeout(() => {
        inFlight -= 1;
        res.writeHead(200).end('ok');
      }, 20);
    });
  });

  afterAll(async () => {
    // Held outcome writes would keep the scheduler's stop waiting.
    store?.letThrough();
    await scheduler?.stop();
    await receiver.close();
    await world.close();
  });

  it('are given back once an attempt is answered, not once its outcome is written', async () => {
    const tenant = world.tenant();
    const endpoint = await tenant.endpoint(receiver.url);
    const now = new Date();
    const docs = [0, 1, 2].map((index) => dueDelivery(tenant.tenantId, endpoint._id, now, { index }));
    const held = new HeldOutcomes(world.db, DUE_TIMING);
    store = held;
    await held.ensureIndexes();
    await seedDue(world.db, docs);
    scheduler = testScheduler(world.db, held, { perEndpointConcurrency: 1 });
    scheduler.start();

    // One slot for the endpoint: every delivery is sent, and answered, while no outcome has been written yet (the last
    // request reaches the receiver before its answer reaches the scheduler: wait for both).
    await waitFor(() => receiver.received.length === docs.length && held.held === docs.length, {
      timeoutMs: 30_000,
      what: 'every delivery sent and answered while the first outcomes wait to be written',
    });
    expect(receiver.received).toHaveLength(docs.length);
    // What the gauges show: every worker busy with an outcome write, no endpoint slot taken.
    expect(scheduler.slots).toEqual({ workers: docs.length, endpoints: 0 });
    // The slot still bounds the requests in flight to the receiver.
    expect(mostInFlight).toBe(1);
    held.letThrough();
    await waitFor(
      async () =>
        (await world.db
          .collection<DeliveryDoc>(COLLECTIONS.deliveries)
          .countDocuments({ tenantId: tenant.tenantId, state: 'succeeded' })) === docs.length,
      { timeoutMs: 30_000, what: 'every outcome recorded' },
    );
  });
});
