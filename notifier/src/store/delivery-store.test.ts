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
  it('keeps a delivery’s lease across tries of its leased insert, and counts it new to the try that finds it so stored', async () => {
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
    expect(await store.insertNew([doc], leased())).toEqual(new Set([doc._id]));
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

  it('counts a delivery found stored under another lease, or under its own once it ran out, as existing', async () => {
    const sim = new SimStore(random(1), { latency: false });
    const store = new DeliveryStore(new SimConnection(sim).db(), TIMING);
    const other = delivery('dlv_other');
    await store.insertNew([other], { ids: new Set([other._id]), until: new Date(Date.now() + LEASE_MS) });
    // Another notifier's try: its own lease id.
    const mine = delivery('dlv_other');
    expect(await store.insertNew([mine], { ids: new Set([mine._id]), until: new Date(Date.now() + LEASE_MS) })).toEqual(
      new Set(),
    );
    expect(mine.leaseId).not.toBe(other.leaseId);
    // This notifier's own try, once the lease it stored ran out (it may be taken over by now).
    const ended = delivery('dlv_ended');
    await store.insertNew([ended], { ids: new Set([ended._id]), until: new Date(Date.now() - 1) });
    expect(
      await store.insertNew([ended], { ids: new Set([ended._id]), until: new Date(Date.now() + LEASE_MS) }),
    ).toEqual(new Set());
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
