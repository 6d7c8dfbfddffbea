import { COLLECTIONS } from '@vigil/proto';
import { DeliveryStore, newDelivery, type DeliveryDoc } from './delivery-store';
import { random, SimConnection, SimStore } from './testing/sim-store';

const TIMING = { bucketMs: 10_000, graceMs: 2_000 };
const LEASE_MS = 30_000;

const delivery = (id: string): DeliveryDoc =>
  newDelivery(
    {
      _id: id,
      tenantId: 'ten_1',
      endpointId: 'we_1',
      webhookId: `msg_${id}`,
      eventId: `evt_${id}`,
      event: 'record.flagged',
      subjectId: 'mod_1',
      trigger: { kind: 'record' } as unknown as DeliveryDoc['trigger'],
      body: '{}',
    },
    new Date(),
  );

describe('DeliveryStore', () => {
  it('keeps a delivery’s lease across tries of its leased insert, so an outcome written after a lost reply is recorded', async () => {
    const sim = new SimStore(random(1), { latency: false });
    const store = new DeliveryStore(new SimConnection(sim).db(), TIMING);
    const doc = delivery('dlv_1');
    const leased = () => ({ ids: new Set([doc._id]), until: new Date(Date.now() + LEASE_MS) });
    // The first try's insert lands, its reply is lost: the batch tries again with the same document.
    sim.faults.lost = 1;
    await expect(store.insertNew([doc], leased())).rejects.toThrow('reply lost');
    sim.faults.lost = 0;
    const stored = () => sim.docs(COLLECTIONS.deliveries).get(doc._id);
    const firstLease = stored()?.leaseId;
    expect(await store.insertNew([doc], leased())).toEqual(new Set());
    // The attempt made meanwhile is written under the lease the store holds.
    const recorded = await store.recordAttempt(
      doc,
      { at: new Date(), statusCode: 204, durationMs: 3 },
      { state: 'succeeded' },
    );
    expect(stored()).toMatchObject({ state: 'succeeded', attemptCount: 1, attempts: [{ statusCode: 204 }] });
    expect(recorded).toBe(true);
    expect(firstLease).toBeDefined();
  });

  it('reports an outcome written under a lease the delivery no longer has as not recorded', async () => {
    const sim = new SimStore(random(1), { latency: false });
    const store = new DeliveryStore(new SimConnection(sim).db(), TIMING);
    const doc = delivery('dlv_1');
    await store.insertNew([doc], { ids: new Set([doc._id]), until: new Date(Date.now() + LEASE_MS) });
    const stale = { ...doc, leaseId: 'taken-over' };
    expect(
      await store.recordAttempt(stale, { at: new Date(), durationMs: 1, error: 'timeout' }, { state: 'failed' }),
    ).toBe(false);
    expect(sim.docs(COLLECTIONS.deliveries).get(doc._id)).toMatchObject({ state: 'sending', attemptCount: 0 });
  });
});
