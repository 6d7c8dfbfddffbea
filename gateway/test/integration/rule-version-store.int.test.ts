import { MongoClient, type CommandStartedEvent, type CommandSucceededEvent } from 'mongodb';
import { COLLECTIONS, LIMITS } from '@vigil/proto';
import { testServers, uniqueName } from '../../../deploy/test-support';
import { LimitExceededError } from '../../src/errors';
import { RuleVersionStore } from '../../src/store/rule-version-store';

/**
 * Rule set versions on the real store: a page of `GET /rules/versions` reads the versions it lists (by `_id`, from
 * their numbers), not the tenant's whole history, and a tenant's versions are bounded, exactly under concurrent writes.
 */
const client = new MongoClient(testServers().mongoUrl, { monitorCommands: true });
const db = client.db(uniqueName('gwrv'), { ignoreUndefined: true });

afterAll(async () => {
  await db.dropDatabase().catch(() => undefined);
  await client.close();
});

/** Version documents the store answered from `rule_versions` (every batch of every find), while `work` runs. */
async function versionsRead<T>(work: () => Promise<T>): Promise<{ result: T; read: number; commands: number }> {
  const mine = new Set<number>();
  let read = 0;
  let commands = 0;
  const started = (event: CommandStartedEvent) => {
    const target = event.command[event.commandName] as unknown;
    if (event.databaseName === db.databaseName && target === COLLECTIONS.ruleVersions) {
      mine.add(event.requestId);
      commands += 1;
    }
  };
  const succeeded = (event: CommandSucceededEvent) => {
    if (!mine.has(event.requestId)) return;
    const cursor = (event.reply as { cursor?: { firstBatch?: unknown[]; nextBatch?: unknown[] } }).cursor;
    read += (cursor?.firstBatch ?? cursor?.nextBatch ?? []).length;
  };
  client.on('commandStarted', started);
  client.on('commandSucceeded', succeeded);
  try {
    const result = await work();
    return { result, read, commands };
  } finally {
    client.off('commandStarted', started);
    client.off('commandSucceeded', succeeded);
  }
}

/** Writes `count` versions for the tenant, as the config store does; `gaps` are numbers given out but never stored. */
async function seed(store: RuleVersionStore, tenantId: string, count: number, gaps: number[] = []): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const version = await store.allocate(tenantId);
    if (gaps.includes(version)) continue;
    await store.insert({ tenantId, version, rules: [], kind: 'draft', author: 'api_key:test' });
  }
}

/** Every page of `limit`, newest first, following `starting_after` as a client does. */
async function walk(store: RuleVersionStore, tenantId: string, limit: number): Promise<number[][]> {
  const pages: number[][] = [];
  let before: number | undefined;
  for (;;) {
    const page = await store.list(tenantId, limit, before);
    pages.push(page.docs.map((doc) => doc.version));
    if (!page.hasMore) return pages;
    before = page.docs[page.docs.length - 1]!.version;
  }
}

it('reads a page by its version numbers: a page of one reads at most two versions, however long the history', async () => {
  const store = new RuleVersionStore(db);
  await store.ensureIndexes();
  const tenantId = uniqueName('ten');
  await seed(store, tenantId, 60);
  // Another tenant's versions are never read either.
  await seed(store, uniqueName('ten'), 5);

  const first = await versionsRead(() => store.list(tenantId, 1));
  expect(first.result.docs.map((doc) => doc.version)).toEqual([60]);
  expect(first.result.hasMore).toBe(true);
  expect(first.read).toBeLessThanOrEqual(2);
  expect(first.result.docs[0]).not.toHaveProperty('rules');

  const older = await versionsRead(() => store.list(tenantId, 10, 31));
  expect(older.result.docs.map((doc) => doc.version)).toEqual([30, 29, 28, 27, 26, 25, 24, 23, 22, 21]);
  expect(older.read).toBeLessThanOrEqual(11);

  const pages = await walk(store, tenantId, 7);
  expect(pages.flat()).toEqual(Array.from({ length: 60 }, (_, i) => 60 - i));
  expect(pages.map((page) => page.length)).toEqual([7, 7, 7, 7, 7, 7, 7, 7, 4]);
});

it('pages past numbers given out to writes that failed, and says when nothing older is left', async () => {
  const store = new RuleVersionStore(db);
  const tenantId = uniqueName('ten');
  await seed(store, tenantId, 30, [1, 2, 9, 10, 11, 12, 13, 14, 15, 25, 30]);
  const stored = Array.from({ length: 30 }, (_, i) => 30 - i).filter(
    (n) => ![1, 2, 9, 10, 11, 12, 13, 14, 15, 25, 30].includes(n),
  );
  for (const limit of [1, 3, 5, 100]) {
    const pages = await walk(store, tenantId, limit);
    expect({ limit, versions: pages.flat() }).toEqual({ limit, versions: stored });
    expect(pages.slice(0, -1).every((page) => page.length === limit)).toBe(true);
  }
  // The last stored version listed: nothing older, though numbers below it were given out.
  const last = await store.list(tenantId, 1, 4);
  expect(last).toMatchObject({ docs: [expect.objectContaining({ version: 3 })], hasMore: false });
  expect(await store.list(tenantId, 10, 1)).toEqual({ docs: [], hasMore: false });
  expect(await store.list(uniqueName('ten'), 10)).toEqual({ docs: [], hasMore: false });
});

it('gives out at most the bound of version numbers to a tenant, exactly under concurrent writes', async () => {
  expect(LIMITS.ruleVersions).toBe(1000);
  const store = new RuleVersionStore(db, { maxVersions: 5 });
  const tenantId = uniqueName('ten');
  const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => store.allocate(tenantId)));
  const given = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  expect(given.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
  const refusals = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
  expect(refusals).toHaveLength(3);
  for (const err of refusals) {
    expect(err).toBeInstanceOf(LimitExceededError);
    expect(err).toMatchObject({ code: 'limit_exceeded', details: { limit: 5 } });
  }
  // Another tenant has its own.
  expect(await store.allocate(uniqueName('ten'))).toBe(1);
});
