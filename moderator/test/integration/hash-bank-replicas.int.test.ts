import { scratchDb } from '../../../deploy/test-support';
import { BankIndexes } from '../../src/hash-banks/bank-indexes';
import { changeId, HashBankStore } from '../../src/hash-banks/hash-bank-store';

// Two moderator replicas' bank indexes over one real store: what one replica's API call wrote, the other matches with
// from its next use, through the numbered changes (no time-to-live involved).

const scratch = scratchDb('hashbank_replicas');
const store = new HashBankStore(scratch.db);
const tenantId = 'ten_replicas';
const pdq = (digit: string) => digit.repeat(64);

afterAll(() => scratch.drop());

beforeAll(() => store.ensureIndexes());

describe('bank indexes across replicas', () => {
  it('applies every change answered by one replica to the other’s next match, and loads the same from scratch', async () => {
    const a = new BankIndexes(store, 60_000);
    const b = new BankIndexes(store, 60_000);
    // Both replicas hold the tenant's (empty) index before any bank exists.
    expect((await a.current(tenantId)).active).toBe(false);
    expect((await b.current(tenantId)).active).toBe(false);

    const bank = await store.createBank(tenantId, {
      name: 'Known',
      kind: 'pdq',
      distance: 31,
      action: 'flag',
      negative: false,
      enabled: true,
    });
    const { added } = await store.addHashes(tenantId, bank._id, [
      { value: pdq('a'), metadata: { source: 'x' } },
      { value: pdq('b'), metadata: {} },
    ]);
    expect(added).toHaveLength(2);
    const hits = (index: Awaited<ReturnType<BankIndexes['current']>>, value: string) =>
      index.match({ pdq: value }).matches.map((hit) => hit.hashId);
    expect(hits(await b.current(tenantId), pdq('a'))).toEqual([added[0]!._id]);

    // Disabled by replica A's call: B no longer matches it, A neither.
    await store.updateHash(tenantId, bank._id, added[0]!._id, { enabled: false });
    expect(hits(await b.current(tenantId), pdq('a'))).toEqual([]);
    expect(hits(await a.current(tenantId), pdq('a'))).toEqual([]);

    // Withdrawn: gone from B's index with the next use.
    await store.withdrawHash(tenantId, bank._id, added[1]!._id);
    expect(hits(await b.current(tenantId), pdq('b'))).toEqual([]);

    // The bank switched off, then on: B follows both.
    await store.updateBank(tenantId, bank._id, { enabled: false });
    expect((await b.current(tenantId)).active).toBe(false);
    await store.updateBank(tenantId, bank._id, { enabled: true });
    expect((await b.current(tenantId)).active).toBe(true);

    // A third replica starting now loads the same state.
    const c = new BankIndexes(store, 60_000);
    const fresh = await c.current(tenantId);
    expect(fresh.hashCount).toBe((await b.current(tenantId)).hashCount);
    expect(hits(fresh, pdq('a'))).toEqual([]);
  });

  it('waits for a change still being written, and applies one whose writer died after OPEN_CHANGE_MS', async () => {
    const tenant = 'ten_open_change';
    const bank = await store.createBank(tenant, {
      name: 'B',
      kind: 'md5',
      distance: 0,
      action: 'flag',
      negative: false,
      enabled: true,
    });
    let now = Date.now();
    const reader = new BankIndexes(store, 600_000, () => now);
    await reader.current(tenant);
    // A writer that claimed change n and wrote its hash, then died before marking the change done.
    const n = (await store.head(tenant)) + 1;
    const changes = scratch.db.collection<{ _id: string }>('hash_bank_changes');
    await changes.insertOne({
      _id: changeId(tenant, n),
      tenantId: tenant,
      n,
      bankId: bank._id,
      hashes: true,
      done: false,
      at: new Date(now),
    } as never);
    await scratch.db.collection<{ _id: string }>('bank_hashes').insertOne({
      _id: 'hsh_0000000000000000000000',
      tenantId: tenant,
      bankId: bank._id,
      value: 'c'.repeat(32),
      metadata: {},
      enabled: true,
      review: 'unreviewed',
      change: changeId(tenant, n),
      createdAt: new Date(now),
      updatedAt: new Date(now),
    } as never);
    expect((await reader.current(tenant)).match({ md5: 'c'.repeat(32) }).matches).toEqual([]);
    now += 31_000;
    expect((await reader.current(tenant)).match({ md5: 'c'.repeat(32) }).matches).toHaveLength(1);
  });

  it('drops a tenant’s index once it went unused for the idle bound', async () => {
    let now = Date.now();
    const indexes = new BankIndexes(store, 1000, () => now);
    await indexes.current('ten_idle_a');
    now += 500;
    await indexes.current('ten_idle_b');
    expect(indexes.size).toBe(2);
    now += 61_000;
    await indexes.current('ten_idle_b');
    expect(indexes.size).toBe(1);
  });
});
