import pino from 'pino';
import { waitFor } from '../../../deploy/test-support';
import type { DeliveryDoc, DeliveryStore } from '../store/delivery-store';
import { OutcomeWriter, type OutcomeWriterOptions } from './outcome-writer';

const doc = (id: string, body = '{}'): DeliveryDoc =>
  ({ _id: id, endpointId: 'we_1', state: 'succeeded', body, attempts: [] }) as unknown as DeliveryDoc;

/**
 * A store in memory recording each insert. `failNext(n, lose)` makes the next n inserts fail: before applying them,
 * or (`lose`) after applying them, as a reply lost on the way back. `hold()` keeps inserts from answering until
 * `let()`.
 */
function store() {
  const stored = new Map<string, DeliveryDoc>();
  const inserts: string[][] = [];
  let failures = 0;
  let lose = false;
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const s = {
    insertNew: async (docs: DeliveryDoc[]) => {
      inserts.push(docs.map((d) => d._id));
      if (gate) await gate;
      if (failures > 0) {
        failures -= 1;
        if (!lose) throw new Error('store down');
        for (const d of docs) stored.set(d._id, d);
        throw new Error('reply lost');
      }
      const inserted = new Set<string>();
      for (const d of docs) {
        if (stored.has(d._id)) continue;
        stored.set(d._id, d);
        inserted.add(d._id);
      }
      return inserted;
    },
  } as unknown as DeliveryStore;
  return {
    store: s,
    stored,
    inserts,
    failNext: (n: number, lost = false) => {
      failures = n;
      lose = lost;
    },
    hold: () => {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    let: () => {
      gate = undefined;
      open?.();
    },
  };
}

const log = pino({ level: 'silent' });

/** Lets the promises and immediate callbacks queued so far run. */
async function turns(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

function writer(s: ReturnType<typeof store>, options: Partial<OutcomeWriterOptions> = {}) {
  return new OutcomeWriter(s.store, {
    windowMs: 60_000,
    maxGroup: 4,
    maxPending: 100,
    maxPendingBytes: 1024 * 1024,
    backoff: { initialMs: 5, maxMs: 20, jitter: 0 },
    closeDeadlineMs: 5_000,
    isolateAfterAttempts: 5,
    log,
    ...options,
  });
}

/** Whether the promise has settled (after the microtasks queued so far): 'resolved', 'rejected' or 'pending'. */
async function stateOf(promise: Promise<void> | undefined): Promise<'resolved' | 'rejected' | 'pending'> {
  if (!promise) return 'resolved';
  let state: 'resolved' | 'rejected' | 'pending' = 'pending';
  promise.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
}

/** A store that refuses every insert holding `bad` (a reason of the delivery's own), or fails `away` times first. */
function refusing(bad: string, away = 0) {
  const stored = new Map<string, DeliveryDoc>();
  const inserts: string[][] = [];
  let failures = away;
  const s = {
    insertNew: (docs: DeliveryDoc[]) => {
      inserts.push(docs.map((d) => d._id));
      if (failures > 0) {
        failures -= 1;
        return Promise.reject(new StoreAway('store down'));
      }
      if (docs.some((d) => d._id === bad)) return Promise.reject(new Error('document refused'));
      for (const d of docs) stored.set(d._id, d);
      return Promise.resolve(new Set(docs.map((d) => d._id)));
    },
  } as unknown as DeliveryStore;
  return { store: s, stored, inserts };
}

class StoreAway extends Error {}

/** A writer that isolates after `isolateAfterAttempts` tries and drops what the store refuses (not StoreAway). */
function isolating(s: DeliveryStore, isolateAfterAttempts: number) {
  const dropped: string[] = [];
  const w = new OutcomeWriter(s, {
    windowMs: 1,
    maxGroup: 8,
    maxPending: 100,
    maxPendingBytes: 1024 * 1024,
    backoff: { initialMs: 2, maxMs: 5, jitter: 0 },
    closeDeadlineMs: 5_000,
    isolateAfterAttempts,
    retriable: (err) => err instanceof StoreAway,
    onDropped: () => dropped.push('dropped'),
    log,
  });
  return { w, dropped };
}

describe('OutcomeWriter', () => {
  it('after failed tries inserts one delivery at a time, and drops one the store refuses so the others are written', async () => {
    const r = refusing('dlv_bad');
    const { w, dropped } = isolating(r.store, 3);
    void w.add([doc('dlv_1'), doc('dlv_bad'), doc('dlv_2')]);
    await w.settled();
    expect(r.inserts.slice(0, 3)).toEqual([
      ['dlv_1', 'dlv_bad', 'dlv_2'],
      ['dlv_1', 'dlv_bad', 'dlv_2'],
      ['dlv_1', 'dlv_bad', 'dlv_2'],
    ]);
    expect(r.inserts.slice(3)).toEqual([['dlv_1'], ['dlv_bad'], ['dlv_2']]);
    expect([...r.stored.keys()]).toEqual(['dlv_1', 'dlv_2']);
    expect(dropped).toEqual(['dropped']);
    expect(w.pending).toBe(0);
  });

  it('drops nothing while the store is away, even past the tries before isolation', async () => {
    const r = refusing('none', 6);
    const { w, dropped } = isolating(r.store, 2);
    void w.add([doc('dlv_1'), doc('dlv_2')]);
    await w.settled();
    expect([...r.stored.keys()]).toEqual(['dlv_1', 'dlv_2']);
    expect(dropped).toEqual([]);
    expect(r.inserts.length).toBeGreaterThan(6);
  });

  it('writes the deliveries of several batches in one insert once the window of the first has passed', async () => {
    const s = store();
    const w = writer(s, { windowMs: 80 });
    const started = Date.now();
    void w.add([doc('dlv_1')]);
    const first = w.settled();
    void w.add([doc('dlv_2'), doc('dlv_3')]);
    const second = w.settled();
    expect(w.has('dlv_2')).toBe(true);
    expect(s.inserts).toEqual([]);
    await Promise.all([first, second]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
    expect(s.inserts).toEqual([['dlv_1', 'dlv_2', 'dlv_3']]);
    expect([...s.stored.keys()]).toEqual(['dlv_1', 'dlv_2', 'dlv_3']);
    expect(w.has('dlv_2')).toBe(false);
    expect(w.settled()).toBeUndefined();
  });

  it('writes at once when a group is full, without waiting for the window', async () => {
    const s = store();
    const w = writer(s, { maxGroup: 3 });
    void w.add([doc('dlv_1'), doc('dlv_2')]);
    expect(await stateOf(w.settled())).toBe('pending');
    void w.add([doc('dlv_3'), doc('dlv_4')]);
    // The full group goes at once; the fourth waits for its own window.
    await waitFor(() => s.inserts.length === 1 && w.pending === 1, {
      timeoutMs: 5_000,
      intervalMs: 5,
      what: 'the full group',
    });
    expect(s.inserts).toEqual([['dlv_1', 'dlv_2', 'dlv_3']]);
    expect(w.pending).toBe(1);
    await w.close();
    expect(s.inserts).toEqual([['dlv_1', 'dlv_2', 'dlv_3'], ['dlv_4']]);
  });

  it('tries a failed insert again until it is confirmed, and counts nothing written before', async () => {
    const s = store();
    const w = writer(s, { windowMs: 1 });
    s.failNext(3);
    void w.add([doc('dlv_1')]);
    const settled = w.settled();
    await waitFor(() => s.inserts.length >= 2, { timeoutMs: 5_000, intervalMs: 2, what: 'a retry' });
    expect(await stateOf(settled)).toBe('pending');
    await settled;
    expect(s.inserts).toHaveLength(4);
    expect(s.stored.has('dlv_1')).toBe(true);
  });

  it('counts an insert whose reply was lost as written only once a retry confirms it (found stored)', async () => {
    const s = store();
    const w = writer(s, { windowMs: 1, backoff: { initialMs: 200, maxMs: 200, jitter: 0 } });
    s.failNext(1, true);
    void w.add([doc('dlv_1')]);
    const settled = w.settled();
    await waitFor(() => s.stored.has('dlv_1'), { timeoutMs: 5_000, intervalMs: 2, what: 'the applied insert' });
    // Applied, but its reply never came: not counted until the retry finds it stored.
    expect(await stateOf(settled)).toBe('pending');
    expect(w.has('dlv_1')).toBe(true);
    await settled;
    expect(s.inserts).toEqual([['dlv_1'], ['dlv_1']]);
  });

  it('keeps one insert in flight at a time, in the order the deliveries came', async () => {
    const s = store();
    // No window: each delivery would be written at once, were an insert not in flight.
    const w = writer(s, { windowMs: 0 });
    s.hold();
    void w.add([doc('dlv_1')]);
    await waitFor(() => s.inserts.length === 1, { timeoutMs: 5_000, intervalMs: 2, what: 'the first insert' });
    const first = w.settled();
    void w.add([doc('dlv_2')]);
    const second = w.settled();
    await turns();
    expect(s.inserts).toEqual([['dlv_1']]);
    s.let();
    await first;
    await second;
    expect(s.inserts).toEqual([['dlv_1'], ['dlv_2']]);
  });

  it('makes a batch wait for room past its bound, until inserts make room', async () => {
    const s = store();
    const w = writer(s, { windowMs: 1, maxPending: 2 });
    s.hold();
    void w.add([doc('dlv_1'), doc('dlv_2')]);
    const room = w.room();
    expect(await stateOf(room)).toBe('pending');
    s.let();
    await room;
    expect(w.pending).toBe(0);
  });

  it('bounds the bytes waiting too', async () => {
    const s = store();
    const w = writer(s, { windowMs: 60_000, maxPendingBytes: 10_000 });
    void w.add([doc('dlv_1', 'x'.repeat(20_000))]);
    const room = w.room();
    expect(await stateOf(room)).toBe('pending');
    await w.close();
    await room;
  });

  it('on close writes what waits at once, then each delivery as it comes', async () => {
    const s = store();
    const w = writer(s);
    void w.add([doc('dlv_1')]);
    const settled = w.settled();
    await w.close();
    await settled;
    void w.add([doc('dlv_2')]);
    await w.settled();
    expect(s.inserts).toEqual([['dlv_1'], ['dlv_2']]);
  });

  it('gives up what the store did not take by the close deadline: those never count as written', async () => {
    const s = store();
    const w = writer(s, { windowMs: 1, closeDeadlineMs: 100 });
    s.failNext(1_000);
    void w.add([doc('dlv_1')]);
    const settled = w.settled();
    const room = w.room();
    await w.close();
    await expect(settled).rejects.toThrow('not written');
    await room;
    await expect(w.settled()).rejects.toThrow('not written');
    const inserts = s.inserts.length;
    await turns();
    expect(s.inserts).toHaveLength(inserts);
    expect(s.stored.has('dlv_1')).toBe(false);
  });
});
