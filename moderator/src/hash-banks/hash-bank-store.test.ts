import { COLLECTIONS } from '@vigil/proto';
import { BankIndexes } from './bank-indexes';
import { changeNumber, HashBankStore } from './hash-bank-store';
import { HashBankUseCases } from './hash-bank-use-cases';
import { RetroQueue } from './retro/retro-queue';
import type { RetroPassDoc } from './retro/retro-pass-store';
import { MemoryDb } from './testing/memory-db';

// Adds of hashes over the real bank store on a store in memory, with one command failing: before it runs, or after it
// ran with its reply lost. The add's retry must leave every hash it wrote with its retroactive pass.

const TENANT = 'ten_1';
const PDQ_A = 'ab'.repeat(32);
const PDQ_B = 'cd'.repeat(32);

async function setup() {
  const db = new MemoryDb();
  const clock = { now: new Date('2026-01-01T00:00:00Z') };
  const store = new HashBankStore(db.asDb(), () => clock.now);
  const passes: RetroPassDoc[] = [];
  const passFailures: Error[] = [];
  const queue = new RetroQueue({
    create: (pass) => {
      const failure = passFailures.shift();
      if (failure) return Promise.reject(failure);
      const doc = { ...pass, open: true, state: 'queued', attempt: 0, bucket: 0 } as RetroPassDoc;
      passes.push(doc);
      return Promise.resolve(doc);
    },
    ofBank: (bankId) => Promise.resolve(passes.filter((pass) => pass.bankId === bankId).reverse()),
  });
  const useCases = new HashBankUseCases({
    store,
    matcher: {} as never,
    policiesOf: () => Promise.resolve([]),
    fetchTimeoutMs: 0,
    retro: queue,
  });
  const bank = await useCases.createBank(TENANT, { name: 'NCII', kind: 'pdq', action: 'flag', negative: false });
  const add = (...values: string[]) =>
    useCases.addHashes(TENANT, bank._id, { hashes: values.map((value) => ({ value })) });
  /** The hashes every pass queued so far names, by value. */
  const passed = async () => {
    const ids = new Set(passes.flatMap((pass) => pass.hashIds));
    return (await store.hashesById([...ids])).map((hash) => hash.value).sort();
  };
  return { db, clock, store, passes, passFailures, add, passed };
}

type Setup = Awaited<ReturnType<typeof setup>>;

describe('HashBankStore.addHashes after a failure', () => {
  it.each<[string, (s: Setup) => void]>([
    ["the insert's reply is lost", ({ db }) => db.fail(COLLECTIONS.bankHashes, 'insertMany', 'lost')],
    ['the change is not marked done', ({ db }) => db.fail(COLLECTIONS.hashBankChanges, 'updateOne', 'before')],
    ["the done mark's reply is lost", ({ db }) => db.fail(COLLECTIONS.hashBankChanges, 'updateOne', 'lost')],
    ['the head does not move', ({ db }) => db.fail(COLLECTIONS.hashBankHeads, 'updateOne', 'before')],
    ['the pass is not queued', ({ passFailures }) => passFailures.push(new Error('pass refused'))],
  ])('queues the pass of the hashes written when %s, at the retry, which counts them added', async (_name, fault) => {
    const s = await setup();
    fault(s);
    await expect(s.add(PDQ_A, PDQ_B)).rejects.toThrow();
    expect(s.passes).toEqual([]);

    const retry = await s.add(PDQ_A, PDQ_B);
    expect(retry.added.map((hash) => hash.value).sort()).toEqual([PDQ_A, PDQ_B]);
    expect(retry.duplicates).toBe(0);
    expect(s.passes).toHaveLength(1);
    expect(await s.passed()).toEqual([PDQ_A, PDQ_B]);
    // The pass reads its hashes by the retry's change, which they carry now.
    expect(s.passes[0]!.change).toBe(retry.added[0]!.change);

    // Added again by another request, later: true duplicates, and no pass.
    s.clock.now = new Date(s.clock.now.getTime() + 60_000);
    expect(await s.add(PDQ_A, PDQ_B)).toMatchObject({ added: [], duplicates: 2 });
    expect(s.passes).toHaveLength(1);
  });

  it('queues the pass again when the owed mark was not cleared after it, and then no more', async () => {
    const s = await setup();
    await s.add(PDQ_A);
    // The add's second write to its change (after the done mark): clearing the owed mark once the pass is queued.
    s.db.fail(COLLECTIONS.hashBankChanges, 'updateOne', 'before', 1);
    await expect(s.add(PDQ_B)).rejects.toThrow();
    await expect(s.add(PDQ_B)).resolves.toMatchObject({ duplicates: 0 });
    expect(await s.add(PDQ_B)).toMatchObject({ added: [], duplicates: 1 });
    expect(s.passes.map((pass) => pass.hashIds.length)).toEqual([1, 1, 1]);
    expect(await s.passed()).toEqual([PDQ_A, PDQ_B]);
  });

  it('counts a hash another add wrote and followed up as a duplicate, and queues a pass only for the new one', async () => {
    const s = await setup();
    await s.add(PDQ_A);
    const second = await s.add(PDQ_A, PDQ_B);
    expect(second.added.map((hash) => hash.value)).toEqual([PDQ_B]);
    expect(second.duplicates).toBe(1);
    expect(s.passes.map((pass) => pass.hashIds.length)).toEqual([1, 1]);
  });

  it('takes over every hash a failed add wrote once its change is older than OPEN_CHANGE_MS, not only those asked', async () => {
    const s = await setup();
    s.db.fail(COLLECTIONS.bankHashes, 'insertMany', 'lost');
    await expect(s.add(PDQ_A, PDQ_B)).rejects.toThrow();
    // A retry within OPEN_CHANGE_MS takes over what it asks for only: the failed add may still be writing.
    await s.add(PDQ_A);
    expect(await s.passed()).toEqual([PDQ_A]);
    s.clock.now = new Date(s.clock.now.getTime() + 31_000);
    const later = await s.add('ef'.repeat(32));
    expect(later.added).toHaveLength(1);
    expect(await s.passed()).toEqual([PDQ_A, PDQ_B, 'ef'.repeat(32)].sort());
    s.clock.now = new Date(s.clock.now.getTime() + 31_000);
    expect(await s.add(PDQ_B)).toMatchObject({ added: [], duplicates: 1 });
  });

  it("leaves a retry's pass unapplied by the live index until the failed add's open change is taken as done", async () => {
    const s = await setup();
    const indexes = new BankIndexes(s.store, 600_000, () => s.clock.now.getTime());
    await indexes.current(TENANT);
    s.db.fail(COLLECTIONS.bankHashes, 'insertMany', 'lost');
    await expect(s.add(PDQ_A)).rejects.toThrow();
    await s.add(PDQ_A);
    const change = changeNumber(s.passes[0]!.change!);
    expect(await indexes.applied(TENANT, change)).toBe(false);
    s.clock.now = new Date(s.clock.now.getTime() + 31_000);
    expect(await indexes.applied(TENANT, change)).toBe(true);
    expect((await indexes.current(TENANT)).match({ pdq: PDQ_A }).matches).toHaveLength(1);
  });
});
