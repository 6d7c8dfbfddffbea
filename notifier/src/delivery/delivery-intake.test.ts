import { COLLECTIONS } from '@vigil/proto';
import { DeliveryStore, newDelivery, type DeliveryDoc } from '../store/delivery-store';
import { random, SimConnection, SimStore } from '../store/testing/sim-store';
import { DeliveryIntake, type FirstAttemptFate, type LeaseHolder } from './delivery-intake';

const doc = (id: string, endpointId: string, body?: string): DeliveryDoc =>
  ({ _id: id, endpointId, state: 'pending', ...(body !== undefined ? { body } : {}) }) as DeliveryDoc;

/**
 * A scheduler with `slots` free slots, recording what it was asked. A first attempt is answered as `answer` says: at
 * once with that state, never ('never'), or not sent ('unsent'); `answerNow` answers the ones left waiting.
 */
function holder(slots: number, answer: 'succeeded' | 'pending' | 'never' | 'unsent' = 'succeeded') {
  const calls: string[] = [];
  let free = slots;
  const fates = new Map<string, FirstAttemptFate>();
  const waiting: (() => void)[] = [];
  const slow = new Set<string>();
  const h: LeaseHolder = {
    isSlow: (endpointId) => slow.has(endpointId),
    markSlow: (endpointId) => {
      calls.push(`slow ${endpointId}`);
      slow.add(endpointId);
    },
    sendFirst: (d) => {
      calls.push(`send ${d._id}`);
      const outcome = { ...d, state: answer, attemptCount: 1 } as DeliveryDoc;
      const answered =
        answer === 'never'
          ? new Promise<DeliveryDoc | undefined>((resolve) => waiting.push(() => resolve(outcome)))
          : Promise.resolve(answer === 'unsent' ? undefined : outcome);
      return {
        answered,
        decide: (fate) => {
          calls.push(`${fate} ${d._id}`);
          fates.set(d._id, fate);
        },
      };
    },
    leaseMs: 30_000,
    attemptMs: 15_000,
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
  return {
    holder: h,
    calls,
    fates,
    slow,
    free: () => free,
    answerNow: () => waiting.forEach((resolve) => resolve()),
  };
}

/** A store in memory: `existing` ids were inserted before; `failure` fails the insert (its first `failures` tries). */
function store(existing: string[] = [], failure?: Error, failures = Infinity) {
  const stored = new Map<string, DeliveryDoc>();
  const leases: { ids: string[]; until: Date }[] = [];
  let failing = failure;
  let failed = 0;
  const s = {
    insertNew: (docs: DeliveryDoc[], leased?: { ids: ReadonlySet<string>; until: Date }) => {
      if (failing && failed < failures) {
        failed += 1;
        return Promise.reject(failing);
      }
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
  return { store: s, stored, leases, recover: () => (failing = undefined) };
}

/** A delivery as the fan-out builds it (anew for each try of a batch), for specs on the delivery store. */
const delivery = (): DeliveryDoc =>
  newDelivery(
    {
      ...doc('dlv_1', 'we_1', '{}'),
      tenantId: 'ten_1',
      webhookId: 'msg_1',
      eventId: 'evt_1',
      event: 'record.flagged',
      subjectId: 'mod_1',
      trigger: { kind: 'record' } as unknown as DeliveryDoc['trigger'],
    },
    new Date(),
  );

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
    expect(result).toEqual({
      inserted: new Set(['dlv_1', 'dlv_2']),
      adopted: new Set(['dlv_1', 'dlv_2']),
      sentFirst: new Set(),
    });
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
    expect(result).toEqual({ inserted: new Set(['dlv_1']), adopted: new Set(), sentFirst: new Set() });
    expect(s.leases).toEqual([]);
    expect(woken).toBe(1);
  });
  /** Tries of a failed insert of deliveries sent first follow each other at once. */
  const inserts = { backoff: { initialMs: 1, maxMs: 1 }, closeDeadlineMs: 50 };
  const wait = (h: ReturnType<typeof holder>, s: ReturnType<typeof store>, firstAttemptWaitMs = 200) =>
    new DeliveryIntake(s.store, h.holder, () => {}, { firstAttemptWaitMs, inserts });

  it('stores a fresh delivery once, with the outcome of the attempt made before it', async () => {
    const h = holder(5);
    const s = store();
    const intake = wait(h, s);
    const result = await intake.take([doc('dlv_1', 'we_1', '{}'), doc('dlv_2', 'we_2', '{}')], new Set(['dlv_1']));
    // dlv_2's event may have been handled before: it is claimed first (inserted leased), as always. dlv_1 is stored
    // after the batch, once its receiver answered.
    expect(result).toEqual({
      inserted: new Set(['dlv_2']),
      adopted: new Set(['dlv_2']),
      sentFirst: new Set(['dlv_1']),
    });
    await intake.settled();
    expect(h.calls).toEqual(['reserve we_1', 'send dlv_1', 'reserve we_2', 'adopt dlv_2', 'stored dlv_1']);
    expect(s.stored.get('dlv_1')).toMatchObject({ state: 'succeeded', attemptCount: 1 });
    expect(s.leases).toEqual([{ ids: ['dlv_2'], until: expect.any(Date) as Date }]);
    expect(intake.settled()).toBeUndefined();
  });

  it('stores a failed first attempt pending its retry, in the same insert', async () => {
    const h = holder(5, 'pending');
    const s = store();
    const intake = wait(h, s);
    await intake.take([doc('dlv_1', 'we_1', '{}')], new Set(['dlv_1']));
    await intake.settled();
    expect(s.stored.get('dlv_1')).toMatchObject({ state: 'pending', attemptCount: 1 });
    expect(s.leases).toEqual([]);
    expect(h.fates.get('dlv_1')).toBe('stored');
  });

  it('returns before the receiver answers, and stores the delivery leased once the wait ended without an answer; it waits no more for that endpoint for a while', async () => {
    const h = holder(5, 'never');
    const s = store();
    const intake = wait(h, s, 50);
    // The batch does not wait for the receiver (another tenant's events are behind it): its store does.
    const result = await intake.take([doc('dlv_1', 'we_slow', '{}'), doc('dlv_0', 'we_2')], new Set(['dlv_1']));
    expect(result).toEqual({ inserted: new Set(['dlv_0']), adopted: new Set(), sentFirst: new Set(['dlv_1']) });
    expect(s.stored.has('dlv_1')).toBe(false);
    expect(h.fates.has('dlv_1')).toBe(false);
    const started = Date.now();
    await intake.settled();
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    expect(s.leases[0]?.ids).toEqual(['dlv_1']);
    expect(h.fates.get('dlv_1')).toBe('leased');
    h.answerNow();
    // The endpoint's next fresh delivery is claimed before it is sent, until one of its attempts answers in time.
    expect(h.calls).toContain('slow we_slow');
    await intake.take([doc('dlv_2', 'we_slow', '{}')], new Set(['dlv_2']));
    expect(h.calls).not.toContain('send dlv_2');
    expect(h.calls).toContain('adopt dlv_2');
    h.slow.delete('we_slow');
    await intake.take([doc('dlv_3', 'we_slow', '{}')], new Set(['dlv_3']));
    expect(h.calls).toContain('send dlv_3');
  });

  it('stores leased a fresh delivery that could not be sent, for the usual path to record why', async () => {
    const h = holder(5, 'unsent');
    const s = store();
    const intake = wait(h, s);
    await intake.take([doc('dlv_1', 'we_1', '{}')], new Set(['dlv_1']));
    await intake.settled();
    expect(s.leases[0]?.ids).toEqual(['dlv_1']);
    expect(h.fates.get('dlv_1')).toBe('leased');
  });

  it('says a fresh delivery existed when another notifier stored it first', async () => {
    const h = holder(5);
    const s = store(['dlv_1']);
    const intake = wait(h, s);
    const result = await intake.take([doc('dlv_1', 'we_1', '{}')], new Set(['dlv_1']));
    await intake.settled();
    expect(h.fates.get('dlv_1')).toBe('existed');
    expect(result).toEqual({ inserted: new Set(), adopted: new Set(), sentFirst: new Set(['dlv_1']) });
  });

  it('tries a failed store of a delivery sent first again until it is confirmed, and sends nothing again when the batch is read again meanwhile', async () => {
    const h = holder(5);
    const s = store([], new Error('store down'), 3);
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const slow = {
      insertNew: async (docs: DeliveryDoc[]) => {
        await holding;
        return s.store.insertNew(docs);
      },
    } as unknown as DeliveryStore;
    const intake = new DeliveryIntake(slow, h.holder, () => {}, { firstAttemptWaitMs: 200, inserts });
    await intake.take([doc('dlv_1', 'we_1', '{}')], new Set(['dlv_1']));
    // Read again (a rejoin) while its store is under way: taken in already.
    const again = await intake.take([doc('dlv_1', 'we_1', '{}')], new Set(['dlv_1']));
    expect(again).toEqual({ inserted: new Set(), adopted: new Set(), sentFirst: new Set() });
    held();
    await intake.settled();
    expect(h.calls.filter((call) => call.startsWith('send'))).toEqual(['send dlv_1']);
    expect(h.fates.get('dlv_1')).toBe('stored');
    expect(s.stored.get('dlv_1')).toMatchObject({ state: 'succeeded' });
  });

  it('gives up at the close deadline a store that is not confirmed: the batch’s offset waits for it, in vain', async () => {
    const h = holder(5);
    const s = store([], new Error('store down'));
    const intake = wait(h, s);
    await intake.take([doc('dlv_1', 'we_1', '{}')], new Set(['dlv_1']));
    const settled = intake.settled();
    await intake.close();
    await expect(settled).rejects.toThrow();
    expect(h.fates.get('dlv_1')).toBe('dropped');
    expect(s.stored.has('dlv_1')).toBe(false);
    expect(intake.settled()).toBeUndefined();
  });

  it('leaves a first attempt not sent to the usual path when the batch is handled again after its leased insert’s reply was lost', async () => {
    const sim = new SimStore(random(1), { latency: false });
    const store = new DeliveryStore(new SimConnection(sim).db(), { bucketMs: 10_000, graceMs: 2_000 });
    const h = holder(5, 'unsent');
    // The first try's insert lands and its reply is lost; the next one's reply comes.
    let tries = 0;
    const lostOnce = {
      insertNew: (docs: DeliveryDoc[], leased?: { ids: ReadonlySet<string>; until: Date }) => {
        tries += 1;
        sim.faults.lost = tries === 1 ? 1 : 0;
        return store.insertNew(docs, leased);
      },
    } as unknown as DeliveryStore;
    const intake = new DeliveryIntake(lostOnce, h.holder, () => {}, { firstAttemptWaitMs: 200, inserts });
    await intake.take([delivery()], new Set(['dlv_1']));
    await intake.settled();
    expect(tries).toBe(2);
    // The insert that landed, its reply lost, was tried again under the same lease: found stored under this
    // process's lease, the scheduler works it now (`leased`), not after that lease ran out.
    expect(h.fates.get('dlv_1')).toBe('leased');
    expect(h.calls.filter((call) => call.startsWith('send'))).toEqual(['send dlv_1']);
  });

  it('works a leased delivery at once when the batch is handled again after the insert landed and its reply was lost', async () => {
    const sim = new SimStore(random(1), { latency: false });
    const store = new DeliveryStore(new SimConnection(sim).db(), { bucketMs: 10_000, graceMs: 2_000 });
    const h = holder(5);
    const adopted: DeliveryDoc[] = [];
    const intake = new DeliveryIntake(store, { ...h.holder, adopt: (d) => adopted.push(d) }, () => {});
    sim.faults.lost = 1;
    await expect(intake.take([delivery()])).rejects.toThrow('reply lost');
    sim.faults.lost = 0;
    // The batch is built anew for its next try: the delivery found stored is its own, under the lease it stored.
    const result = await intake.take([delivery()]);
    const stored = sim.docs(COLLECTIONS.deliveries).get('dlv_1');
    expect(stored).toMatchObject({ state: 'sending' });
    expect(adopted.map((d) => [d._id, d.leaseId])).toEqual([['dlv_1', stored?.leaseId]]);
    expect(result.adopted).toEqual(new Set(['dlv_1']));
    expect(h.calls).toEqual(['reserve we_1', 'release we_1', 'reserve we_1']);
  });

  it.each([
    ['', false],
    [', though a try in between failed too (its lease ran from later)', true],
  ])(
    'leaves a leased delivery to be taken over when the batch is tried again with less than an attempt’s time left on its lease%s',
    async (_, between) => {
      const start = Date.now();
      jest.useFakeTimers({
        now: start,
        doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'setTimeout', 'clearTimeout'],
      });
      try {
        const sim = new SimStore(random(1), { latency: false });
        const store = new DeliveryStore(new SimConnection(sim).db(), { bucketMs: 10_000, graceMs: 2_000 });
        const h = holder(5);
        const intake = new DeliveryIntake(store, h.holder, () => {});
        sim.faults.lost = 1;
        await expect(intake.take([delivery()])).rejects.toThrow('reply lost');
        sim.faults.lost = 0;
        const stored = sim.docs(COLLECTIONS.deliveries).get('dlv_1');
        if (between) {
          jest.setSystemTime(start + 10_000);
          sim.faults.before = 1;
          await expect(intake.take([delivery()])).rejects.toThrow('connection reset');
          sim.faults.before = 0;
        }
        // 10 s of the 30 s lease are left: an attempt (up to 15 s) started now could outlast it, and be sent again by
        // the notifier that takes the delivery over.
        jest.setSystemTime(start + 20_000);
        const result = await intake.take([delivery()]);
        expect(result.adopted).toEqual(new Set());
        expect(h.calls.slice(-2)).toEqual(['reserve we_1', 'release we_1']);
        expect(h.calls).not.toContain('adopt dlv_1');
        expect(h.free()).toBe(5);
        // Left as the first try stored it, to be taken over once its lease ran out.
        expect(sim.docs(COLLECTIONS.deliveries).get('dlv_1')).toMatchObject({
          state: 'sending',
          leaseId: stored?.leaseId,
          leaseUntil: stored?.leaseUntil,
        });
      } finally {
        jest.useRealTimers();
      }
    },
  );

  it('sends nothing before storing when the wait is 0', async () => {
    const h = holder(5);
    const s = store();
    await wait(h, s, 0).take([doc('dlv_1', 'we_1', '{}')], new Set(['dlv_1']));
    expect(h.calls).toEqual(['reserve we_1', 'adopt dlv_1']);
  });
  it('claims first a fresh delivery it took in lately: its event was published again', async () => {
    const h = holder(5);
    const s = store();
    const intake = wait(h, s);
    await intake.take([doc('dlv_1', 'we_1', '{}')], new Set(['dlv_1']));
    await intake.settled();
    await intake.take([doc('dlv_1', 'we_1', '{}')], new Set(['dlv_1']));
    expect(h.calls.filter((call) => call.startsWith('send'))).toEqual(['send dlv_1']);
    expect(h.calls.slice(-2)).toEqual(['reserve we_1', 'release we_1']);
  });

  describe('with an outcome writer (write-behind)', () => {
    /** A writer recording what it was handed; `full` keeps `room` waiting until `makeRoom`. */
    function writer(full = false) {
      const added: string[] = [];
      let open: () => void = () => {};
      const room = full ? new Promise<void>((resolve) => (open = resolve)) : Promise.resolve();
      return {
        added,
        makeRoom: () => open(),
        writer: {
          room: () => room,
          add: (docs: readonly DeliveryDoc[]) => {
            added.push(...docs.map((d) => d._id));
            return Promise.resolve();
          },
          has: (id: string) => added.includes(id),
        },
      };
    }
    const behind = (h: ReturnType<typeof holder>, s: ReturnType<typeof store>, w: ReturnType<typeof writer>) =>
      new DeliveryIntake(s.store, h.holder, () => {}, { firstAttemptWaitMs: 200 }, w.writer);

    it('hands the deliveries answered in time to the writer and inserts only the others before returning', async () => {
      const h = holder(5);
      const s = store();
      const w = writer();
      const intake = behind(h, s, w);
      const result = await intake.take([doc('dlv_1', 'we_1', '{}'), doc('dlv_2', 'we_2', '{}')], new Set(['dlv_1']));
      await intake.settled();
      expect(w.added).toEqual(['dlv_1']);
      expect(s.stored.has('dlv_1')).toBe(false);
      expect(s.leases).toEqual([{ ids: ['dlv_2'], until: expect.any(Date) as Date }]);
      // Its slots go back as it is handed over.
      expect(h.fates.get('dlv_1')).toBe('stored');
      expect(result).toEqual({
        inserted: new Set(['dlv_2']),
        adopted: new Set(['dlv_2']),
        sentFirst: new Set(['dlv_1']),
      });
    });

    it('inserts nothing when every delivery went to the writer', async () => {
      const h = holder(5);
      let inserts = 0;
      const s = store();
      const counting = {
        insertNew: (docs: DeliveryDoc[]) => {
          inserts += 1;
          return s.store.insertNew(docs);
        },
      } as unknown as DeliveryStore;
      const w = writer();
      const intake = new DeliveryIntake(counting, h.holder, () => {}, { firstAttemptWaitMs: 200 }, w.writer);
      await intake.take([doc('dlv_1', 'we_1', '{}')], new Set(['dlv_1']));
      await intake.settled();
      expect(inserts).toBe(0);
      expect(w.added).toEqual(['dlv_1']);
    });

    it('leaves to the writer a delivery it holds when the batch is read again, and sends nothing again', async () => {
      const h = holder(5);
      const s = store();
      const w = writer();
      const intake = behind(h, s, w);
      await intake.take([doc('dlv_1', 'we_1', '{}')], new Set(['dlv_1']));
      await intake.settled();
      // Read again after a rejoin (not fresh): claimed first, were it not held by the writer.
      const again = await intake.take([doc('dlv_1', 'we_1', '{}')]);
      expect(again.inserted).toEqual(new Set());
      expect(s.stored.has('dlv_1')).toBe(false);
      expect(h.calls.filter((call) => call.startsWith('send'))).toEqual(['send dlv_1']);
      expect(w.added).toEqual(['dlv_1']);
    });

    it('sends nothing before the writer has room', async () => {
      const h = holder(5);
      const s = store();
      const w = writer(true);
      const intake = behind(h, s, w);
      const taken = intake.take([doc('dlv_1', 'we_1', '{}')], new Set(['dlv_1']));
      for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
      expect(h.calls).toEqual([]);
      w.makeRoom();
      await taken;
      expect(h.calls).toContain('send dlv_1');
      await intake.settled();
      expect(w.added).toEqual(['dlv_1']);
    });

    it('keeps the first attempts handed over out of a failed insert of the others', async () => {
      const h = holder(5, 'succeeded');
      const s = store([], new Error('store down'));
      const w = writer();
      const intake = behind(h, s, w);
      // dlv_2 has no body: it goes in the batch's insert, which fails; dlv_1 is stored after the batch, by the writer.
      await expect(
        intake.take([doc('dlv_1', 'we_1', '{}'), doc('dlv_2', 'we_2')], new Set(['dlv_1', 'dlv_2'])),
      ).rejects.toThrow('store down');
      s.recover();
      await intake.take([doc('dlv_1', 'we_1', '{}'), doc('dlv_2', 'we_2')], new Set(['dlv_1', 'dlv_2']));
      await intake.settled();
      expect(w.added).toEqual(['dlv_1']);
      expect([...s.stored.keys()]).toEqual(['dlv_2']);
      expect(h.calls.filter((call) => call.startsWith('send'))).toEqual(['send dlv_1']);
    });
  });
});
