import type { DeliveryDoc, DeliveryStore } from '../store/delivery-store';
import { DeliveryIntake, type LeaseHolder } from './delivery-intake';

const doc = (id: string, endpointId: string, body?: string): DeliveryDoc =>
  ({ _id: id, endpointId, state: 'pending', ...(body !== undefined ? { body } : {}) }) as DeliveryDoc;

/** A scheduler with `slots` free slots, recording what it was asked. */
function holder(slots: number) {
  const calls: string[] = [];
  let free = slots;
  const h: LeaseHolder = {
    leaseMs: 30_000,
    reserve: (endpointId) => {
      calls.push(`reserve ${endpointId}`);
      if (free === 0) return false;
      free -= 1;
      return true;
    },
    adopt: (d) => {
      calls.push(`adopt ${d._id}`);
    },
    release: (endpointId) => {
      free += 1;
      calls.push(`release ${endpointId}`);
    },
  };
  return { holder: h, calls, free: () => free };
}

/** A store in memory: `existing` ids were inserted before; `failure` fails the insert. */
function store(existing: string[] = [], failure?: Error) {
  const stored = new Map<string, DeliveryDoc>();
  const leases: { ids: string[]; until: Date }[] = [];
  const s = {
    insertNew: (docs: DeliveryDoc[], leased?: { ids: ReadonlySet<string>; until: Date }) => {
      if (failure) return Promise.reject(failure);
      if (leased) leases.push({ ids: [...leased.ids], until: leased.until });
      const inserted = new Set<string>();
      for (const d of docs) {
        if (existing.includes(d._id) || stored.has(d._id)) continue;
        stored.set(d._id, d);
        inserted.add(d._id);
      }
      return Promise.resolve(inserted);
    },
  } as unknown as DeliveryStore;
  return { store: s, stored, leases };
}

describe('DeliveryIntake', () => {
  it('reserves a slot for each delivery with a body, inserts them leased, then hands the new ones to the scheduler', async () => {
    const h = holder(5);
    const s = store();
    let woken = 0;
    const intake = new DeliveryIntake(s.store, h.holder, () => (woken += 1));
    const result = await intake.take([doc('dlv_1', 'we_1', '{}'), doc('dlv_2', 'we_2', '{}')]);
    expect(h.calls).toEqual(['reserve we_1', 'reserve we_2', 'adopt dlv_1', 'adopt dlv_2']);
    expect(s.leases).toEqual([{ ids: ['dlv_1', 'dlv_2'], until: expect.any(Date) as Date }]);
    expect(s.leases[0]!.until.getTime()).toBeGreaterThan(Date.now() + 25_000);
    expect(result).toEqual({ inserted: new Set(['dlv_1', 'dlv_2']), adopted: new Set(['dlv_1', 'dlv_2']) });
    // Every new delivery is the scheduler's: the due queue has nothing new to look at.
    expect(woken).toBe(0);
  });

  it('leaves to the due queue, and says so, a delivery without a body or without a free slot', async () => {
    const h = holder(1);
    const s = store();
    let woken = 0;
    const intake = new DeliveryIntake(s.store, h.holder, () => (woken += 1));
    const result = await intake.take([doc('dlv_1', 'we_1', '{}'), doc('dlv_2', 'we_1'), doc('dlv_3', 'we_1', '{}')]);
    expect(result.inserted).toEqual(new Set(['dlv_1', 'dlv_2', 'dlv_3']));
    expect(result.adopted).toEqual(new Set(['dlv_1']));
    expect(s.leases[0]?.ids).toEqual(['dlv_1']);
    expect(woken).toBe(1);
  });

  it('gives the slot back for a delivery that existed (a re-consumed event belongs to whoever holds it)', async () => {
    const h = holder(2);
    const s = store(['dlv_old']);
    const intake = new DeliveryIntake(s.store, h.holder, () => {});
    const result = await intake.take([doc('dlv_old', 'we_1', '{}'), doc('dlv_new', 'we_2', '{}')]);
    expect(result.adopted).toEqual(new Set(['dlv_new']));
    expect(h.calls).toContain('release we_1');
    expect(h.calls).not.toContain('adopt dlv_old');
    expect(h.free()).toBe(1);
  });

  it('gives every reserved slot back when the insert fails, and throws', async () => {
    const h = holder(2);
    const s = store([], new Error('store down'));
    const intake = new DeliveryIntake(s.store, h.holder, () => {});
    await expect(intake.take([doc('dlv_1', 'we_1', '{}'), doc('dlv_2', 'we_2', '{}')])).rejects.toThrow('store down');
    expect(h.free()).toBe(2);
    expect(h.calls.filter((call) => call.startsWith('adopt'))).toEqual([]);
  });

  it('inserts everything unleased when this process runs no scheduler', async () => {
    const s = store();
    let woken = 0;
    const intake = new DeliveryIntake(s.store, undefined, () => (woken += 1));
    const result = await intake.take([doc('dlv_1', 'we_1', '{}')]);
    expect(result).toEqual({ inserted: new Set(['dlv_1']), adopted: new Set() });
    expect(s.leases).toEqual([]);
    expect(woken).toBe(1);
  });
});
