import { HASH_BANK_LIMITS, type DomainEvent, type HashMatchRecord } from '@vigil/proto';
import { type FloodLimit } from '../bank-rules';
import { FloodGuard, passes, windowStart, type FloodStore } from './flood-guard';
import type { QuarantineDoc } from './quarantine-store';

/** The quarantine store in memory, as QuarantineStore behaves. */
class MemoryStore implements FloodStore {
  counts = new Map<string, number>();
  quarantines = new Map<string, QuarantineDoc>();
  held = new Map<string, { recordId: string; match: HashMatchRecord }>();

  countMatch(_tenantId: string, hashId: string, window: Date): Promise<number> {
    const key = `${hashId}#${window.getTime()}`;
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return Promise.resolve(n);
  }
  quarantineOf(hashId: string): Promise<QuarantineDoc | null> {
    return Promise.resolve(this.quarantines.get(hashId) ?? null);
  }
  startQuarantine(doc: QuarantineDoc, previous: number | undefined): Promise<boolean> {
    const current = this.quarantines.get(doc._id);
    if (previous === undefined ? current !== undefined : current?.n !== previous) return Promise.resolve(false);
    this.quarantines.set(doc._id, { ...doc });
    return Promise.resolve(true);
  }
  hold(quarantine: QuarantineDoc, recordId: string, match: HashMatchRecord): Promise<boolean> {
    const doc = this.quarantines.get(quarantine._id)!;
    const held = [...this.held.keys()].filter((id) => id.startsWith(`${quarantine._id}#`)).length;
    if (held >= HASH_BANK_LIMITS.heldMatches) {
      doc.overflow += 1;
      return Promise.resolve(false);
    }
    const id = `${quarantine._id}#${recordId}#${match.position}`;
    if (this.held.has(id)) return Promise.resolve(false);
    this.held.set(id, { recordId, match });
    return Promise.resolve(true);
  }
}

const match = (hashId: string, extra: Partial<HashMatchRecord> = {}): HashMatchRecord => ({
  position: 1,
  bankId: 'bnk_1',
  bankName: 'Memes',
  kind: 'pdq',
  distance: 2,
  hashId,
  metadata: {},
  action: 'flag',
  ...extra,
});

function setup(flood: FloodLimit | null = { threshold: 3, windowSeconds: 60 }, start = Date.UTC(2026, 0, 1)) {
  const store = new MemoryStore();
  const raised: DomainEvent[] = [];
  const stored = new Set<string>();
  let now = start;
  let id = 0;
  const guard = new FloodGuard({
    store,
    raise: (event) => {
      const key = `${event.stream}@${event.version}`;
      if (stored.has(key)) return Promise.resolve(false);
      stored.add(key);
      raised.push(event);
      return Promise.resolve(true);
    },
    newId: () => `evt_${++id}`,
    now: () => new Date(now),
  });
  const screen = async (hashId: string, recordId?: string) =>
    (await guard.screen('ten_1', [match(hashId)], () => flood ?? undefined, recordId ? { recordId } : undefined))[0]!;
  return { store, raised, guard, screen, advance: (ms: number) => (now += ms) };
}

describe('windowStart', () => {
  it.each([
    [Date.UTC(2026, 0, 1, 10, 0, 0), 3600, Date.UTC(2026, 0, 1, 10, 0, 0)],
    [Date.UTC(2026, 0, 1, 10, 59, 59, 999), 3600, Date.UTC(2026, 0, 1, 10, 0, 0)],
    [Date.UTC(2026, 0, 1, 11, 0, 0), 3600, Date.UTC(2026, 0, 1, 11, 0, 0)],
    [Date.UTC(2026, 0, 1, 10, 0, 30), 60, Date.UTC(2026, 0, 1, 10, 0, 0)],
  ])('puts %s in the %i-second window starting at %s', (at, seconds, start) => {
    expect(windowStart(new Date(at), seconds).getTime()).toBe(start);
  });
});

describe('passes', () => {
  it.each([
    [2, false],
    [3, false],
    [4, true],
  ])('with a threshold of 3, %i matches pass it: %s', (count, expected) => {
    expect(passes(count, { threshold: 3, windowSeconds: 60 })).toBe(expected);
  });
});

describe('FloodGuard', () => {
  it('lets the threshold of matches act, and quarantines the hash at the next, holding it', async () => {
    const { screen, raised, store } = setup();
    for (const record of ['rec_1', 'rec_2', 'rec_3'])
      expect((await screen('hsh_meme', record)).quarantined).toBeUndefined();
    const fourth = await screen('hsh_meme', 'rec_4');
    expect(fourth.quarantined).toBe(true);
    expect(raised).toHaveLength(1);
    expect(raised[0]).toMatchObject({
      type: 'HashQuarantined',
      stream: 'hash-ten_1-hsh_meme',
      version: 1,
      data: { hashId: 'hsh_meme', bankId: 'bnk_1', number: 1, threshold: 3, windowSeconds: 60, count: 4 },
    });
    expect([...store.held.values()].map((held) => held.recordId)).toEqual(['rec_4']);
  });

  it('holds every later match of a quarantined hash, raising nothing more', async () => {
    const { screen, raised, store } = setup();
    for (let i = 1; i <= 6; i++) await screen('hsh_meme', `rec_${i}`);
    expect((await screen('hsh_meme', 'rec_7')).quarantined).toBe(true);
    expect(raised).toHaveLength(1);
    expect([...store.held.values()].map((held) => held.recordId)).toEqual(['rec_4', 'rec_5', 'rec_6', 'rec_7']);
  });

  it('counts each hash on its own: another hash of the bank keeps acting', async () => {
    const { screen } = setup();
    for (let i = 1; i <= 5; i++) await screen('hsh_meme', `rec_${i}`);
    for (let i = 1; i <= 3; i++) expect((await screen('hsh_other', `rec_o${i}`)).quarantined).toBeUndefined();
  });

  it('starts counting again in the next window', async () => {
    const { screen, advance } = setup();
    for (let i = 1; i <= 3; i++) await screen('hsh_meme', `rec_${i}`);
    advance(60_000);
    for (let i = 4; i <= 6; i++) expect((await screen('hsh_meme', `rec_${i}`)).quarantined).toBeUndefined();
  });

  it('counts nothing for a lookup (no record), but shows a quarantined hash as quarantined', async () => {
    const { screen, store } = setup();
    for (let i = 0; i < 10; i++) expect((await screen('hsh_meme')).quarantined).toBeUndefined();
    expect(store.counts.size).toBe(0);
    for (let i = 1; i <= 4; i++) await screen('hsh_meme', `rec_${i}`);
    expect((await screen('hsh_meme')).quarantined).toBe(true);
    expect(store.held.size).toBe(1);
  });

  it('counts nothing in a bank without a flood limit', async () => {
    const { screen, store } = setup(null);
    for (let i = 1; i <= 10; i++) expect((await screen('hsh_meme', `rec_${i}`)).quarantined).toBeUndefined();
    expect(store.counts.size).toBe(0);
  });

  it('leaves a cancelled match as it is, uncounted', async () => {
    const { guard, store } = setup();
    const cancelled = match('hsh_meme', { cancelledBy: 'hsh_allow' });
    for (let i = 1; i <= 5; i++) {
      const [out] = await guard.screen('ten_1', [cancelled], () => ({ threshold: 3, windowSeconds: 60 }), {
        recordId: `rec_${i}`,
      });
      expect(out).toEqual(cancelled);
    }
    expect(store.counts.size).toBe(0);
  });

  it('keeps at most HASH_BANK_LIMITS.heldMatches matches of one hash', async () => {
    const { screen, store } = setup({ threshold: 1, windowSeconds: 60 });
    const total = HASH_BANK_LIMITS.heldMatches + 5;
    for (let i = 1; i <= total + 1; i++) await screen('hsh_meme', `rec_${i}`);
    expect(store.held.size).toBe(HASH_BANK_LIMITS.heldMatches);
    expect(store.quarantines.get('hsh_meme')!.overflow).toBe(total - HASH_BANK_LIMITS.heldMatches);
  });

  it('lets a released hash act for the rest of its window, and quarantines it again (number 2) in a later one', async () => {
    const { screen, store, raised, advance } = setup();
    for (let i = 1; i <= 4; i++) await screen('hsh_meme', `rec_${i}`);
    const doc = store.quarantines.get('hsh_meme')!;
    advance(1000);
    store.quarantines.set('hsh_meme', { ...doc, state: 'released', decidedAt: new Date(Date.UTC(2026, 0, 1) + 1000) });
    for (let i = 5; i <= 9; i++) expect((await screen('hsh_meme', `rec_${i}`)).quarantined).toBeUndefined();
    advance(60_000);
    for (let i = 10; i <= 12; i++) expect((await screen('hsh_meme', `rec_${i}`)).quarantined).toBeUndefined();
    expect((await screen('hsh_meme', 'rec_13')).quarantined).toBe(true);
    expect(raised.map((event) => event.version)).toEqual([1, 2]);
    expect(store.quarantines.get('hsh_meme')).toMatchObject({ n: 2, state: 'quarantined', overflow: 0 });
  });

  it('writes the quarantine that another replica raised but did not store (it died between)', async () => {
    const { guard, store } = setup();
    const raisedElsewhere = new FloodGuard({
      store,
      raise: () => Promise.resolve(false),
      newId: () => 'evt_x',
      now: () => new Date(Date.UTC(2026, 0, 1)),
    });
    for (let i = 1; i <= 3; i++)
      await guard.screen('ten_1', [match('hsh_meme')], () => ({ threshold: 3, windowSeconds: 60 }), {
        recordId: `rec_${i}`,
      });
    const [out] = await raisedElsewhere.screen(
      'ten_1',
      [match('hsh_meme')],
      () => ({ threshold: 3, windowSeconds: 60 }),
      {
        recordId: 'rec_4',
      },
    );
    expect(out!.quarantined).toBe(true);
    expect(store.quarantines.get('hsh_meme')).toMatchObject({ n: 1, state: 'quarantined' });
  });
});
