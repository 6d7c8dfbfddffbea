import { MongoClient, type Db } from 'mongodb';
import { scratchDb, testServers } from '../../../deploy/test-support';
import { startStoreRelay, type StoreRelay } from '../../../deploy/test-support/store-relay';
import { RetroPassStore } from '../../src/hash-banks/retro/retro-pass-store';

// The hash banks' claims on the real store: a claim insert that lands but whose reply is lost (the store relay drops
// it) leaves a key that no claimant recorded. Once older than the lease it is taken over, by one of two replicas.

const scratch = scratchDb('hash_claims');
const LEASE_MS = 30_000;
let storeRelay: StoreRelay;
let relayed: MongoClient;

beforeAll(async () => {
  storeRelay = await startStoreRelay({ mongoUrl: testServers().mongoUrl, delayMs: 1, dropCommands: ['insert'] });
  relayed = new MongoClient(storeRelay.url, { serverSelectionTimeoutMS: 5000, retryWrites: false });
});

afterAll(async () => {
  await relayed.close();
  await storeRelay.close();
  await scratch.drop();
});

/** The database through the relay, whose next insert's reply is lost: the insert lands, its caller hears an error. */
function losingNextInsertReply(db: Db): Db {
  storeRelay.setFault('drop');
  return relayed.db(db.databaseName);
}

describe('a retroactive pass claim whose reply was lost', () => {
  it('is taken over after the lease with the next attempt, by one of two moderators', async () => {
    const clock = { now: new Date('2026-01-01T00:00:00Z') };
    const now = () => clock.now;
    const store = new RetroPassStore(scratch.db, now);
    await store.ensureIndexes();
    const pass = await store.create({
      _id: 'hrp_lost',
      tenantId: 'ten_1',
      bankId: 'bnk_1',
      trigger: 'added',
      hashIds: ['hsh_1'],
      createdAt: clock.now,
    });
    const limits = { leaseMs: LEASE_MS, maxAttempts: 5 };

    const lossy = new RetroPassStore(losingNextInsertReply(scratch.db), now);
    await expect(lossy.claim(pass, limits)).rejects.toThrow();
    storeRelay.setFault(undefined);
    expect(storeRelay.counts().dropped).toEqual({ insert: 1 });
    expect(await store.get(pass._id)).toMatchObject({ state: 'queued', attempt: 0 });

    // Within the lease its claimant may still record it.
    expect(await store.claim(pass, limits)).toBe('held');
    clock.now = new Date(clock.now.getTime() + LEASE_MS + 1);
    const claims = await Promise.all([
      store.claim(pass, limits),
      new RetroPassStore(scratch.db, now).claim(pass, limits),
    ]);
    expect(claims).toContainEqual({ attempt: 2, deadClaims: 1 });
    expect(claims).toContain('held');
    expect(await store.get(pass._id)).toMatchObject({ state: 'running', attempt: 2 });
    // A runner that read the pass before the takeover finds it recorded.
    clock.now = new Date(clock.now.getTime() + LEASE_MS + 1);
    expect(await store.claim(pass, limits)).toBe('held');
  });
});
