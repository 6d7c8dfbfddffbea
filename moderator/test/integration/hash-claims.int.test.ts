import { COLLECTIONS } from '@vigil/proto';
import { MongoClient, type Db } from 'mongodb';
import { scratchDb, testServers } from '../../../deploy/test-support';
import { startStoreRelay, type StoreRelay } from '../../../deploy/test-support/store-relay';
import { FeedStore, type FeedbackDoc, type FeedDoc } from '../../src/hash-banks/feeds/feed-store';
import { RetroPassStore } from '../../src/hash-banks/retro/retro-pass-store';

// The hash banks' claims on the real store: a claim insert that lands but whose reply is lost (the store relay drops
// it) leaves a key that no claimant recorded. Once older than the lease it is taken over, by one of two replicas.

const scratch = scratchDb('hash_claims');
const LEASE_MS = 30_000;
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

afterAll(() => scratch.drop());

/**
 * The database through a store relay of its own, and the relay: while its `drop` fault is on, an insert lands and its
 * caller hears an error (the relay resets the connection, so the client is used for that one call).
 */
async function throughRelay(db: Db): Promise<{ db: Db; relay: StoreRelay }> {
  const relay = await startStoreRelay({ mongoUrl: testServers().mongoUrl, delayMs: 1, dropCommands: ['insert'] });
  const client = new MongoClient(relay.url, { serverSelectionTimeoutMS: 5000, retryWrites: false });
  cleanups.push(
    () => relay.close(),
    () => client.close(),
  );
  return { db: client.db(db.databaseName), relay };
}

/** A pending StopNCII feedback job of the feed for hash `hsh_1`, due at `at`. */
function feedbackJob(feedId: string, at: Date): FeedbackDoc {
  return {
    _id: `${feedId}:hsh_1`,
    tenantId: 'ten_1',
    feedId,
    hashId: 'hsh_1',
    value: 'Blocked',
    state: 'pending',
    attempts: 0,
    dueAt: at,
    due: 0,
    createdAt: at,
    updatedAt: at,
  };
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

    const { db, relay } = await throughRelay(scratch.db);
    const lossy = new RetroPassStore(db, now);
    relay.setFault('drop');
    await expect(lossy.claim(pass, limits)).rejects.toThrow();
    relay.setFault(undefined);
    expect(relay.counts().dropped).toEqual({ insert: 1 });
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

describe('a feed run or feedback claim whose reply was lost', () => {
  const at = new Date('2026-01-01T00:00:00Z');
  const feed: FeedDoc = {
    _id: 'fed_lost',
    tenantId: 'ten_1',
    bankId: 'bnk_1',
    source: 'file',
    url: 'https://lists.example.org/h.csv',
    intervalS: 3600,
    enabled: true,
    dueAt: at,
    due: 0,
    failures: 0,
    createdAt: at,
    updatedAt: at,
  };
  const job = feedbackJob(feed._id, at);
  const later = (ms: number) => new Date(at.getTime() + ms);

  it.each([
    [
      'a run',
      (store: FeedStore, now: Date) => store.claimRun(feed, now, LEASE_MS),
      (store: FeedStore, dueAt: Date) => store.set(feed._id, { dueAt }),
    ],
    [
      'a feedback attempt',
      (store: FeedStore, now: Date) => store.claimFeedback(job, now, LEASE_MS),
      (store: FeedStore, dueAt: Date) => store.setFeedback(job._id, { dueAt }),
    ],
  ])('%s is taken over after the lease by one of two moderators', async (_name, claim, moveDue) => {
    const store = new FeedStore(scratch.db);
    await store.ensureIndexes();
    await store.insert(feed);
    await store.queueFeedback(job);
    const { db, relay } = await throughRelay(scratch.db);
    relay.setFault('drop');
    await expect(claim(new FeedStore(db), at)).rejects.toThrow();
    relay.setFault(undefined);
    expect(relay.counts().dropped).toEqual({ insert: 1 });

    // Within the lease its claimant may still move the due time.
    expect(await claim(store, later(LEASE_MS - 1))).toBe('held');
    const now = later(LEASE_MS + 1);
    const claims = await Promise.all([claim(store, now), claim(new FeedStore(scratch.db), now)]);
    expect(claims).toContainEqual({ deadClaims: 1 });
    expect(claims).toContain('held');
    // The winner moves the due time: a candidate read before finds nothing to take, even after another lease.
    await moveDue(store, new Date(now.getTime() + LEASE_MS));
    expect(await claim(store, later(3 * LEASE_MS))).toBe('held');
    await store.delete(feed._id);
  });
});

describe('the claims of feeds and feedback jobs', () => {
  it('are deleted once a day old, those of finished jobs too, and not before', async () => {
    const at = new Date('2026-02-01T00:00:00Z');
    const store = new FeedStore(scratch.db);
    await store.ensureIndexes();
    const job = feedbackJob('fed_prune', at);
    await store.queueFeedback(job);
    expect(await store.claimFeedback(job, at, LEASE_MS)).toEqual({ deadClaims: 0 });
    await store.setFeedback(job._id, { state: 'sent', attempts: 1, updatedAt: at }, ['due']);
    const claimsOf = () => scratch.db.collection(COLLECTIONS.hashFeedClaims).countDocuments({ of: job._id });
    expect(await claimsOf()).toBe(1);

    // A replica that read the job before it was sent still finds its claim taken, for a day.
    // (Older claims of the specs above go now.)
    await store.pruneClaims(new Date(at.getTime() + 24 * 3600_000 - 1));
    expect(await claimsOf()).toBe(1);
    expect(await store.claimFeedback(job, new Date(at.getTime() + 3600_000), LEASE_MS)).toBe('held');
    expect(await claimsOf()).toBe(1);
    expect(await store.pruneClaims(new Date(at.getTime() + 24 * 3600_000 + 1))).toBe(1);
    expect(await claimsOf()).toBe(0);
  });
});
