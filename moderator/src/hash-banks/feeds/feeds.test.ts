import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { addressPolicy, COLLECTIONS, SecretBox, type DomainEvent, type HashMetadata } from '@vigil/proto';
import { NotFoundError, UnavailableError } from '../../domain/errors';
import { claimInChain } from '../../store/claim-chain';
import { MemoryClaims } from '../../store/testing/memory-claims';
import { hashIdOf, HashBankStore, newHash, type AddFollowUp, type BankDoc, type HashDoc } from '../hash-bank-store';
import { MemoryDb } from '../testing/memory-db';
import { FeedError, FeedHttp, type FeedAnswer, type FeedCall } from './feed-http';
import { DeltaBuilder } from './feed-pull';
import { credentialsContext, FeedRunner } from './feed-runner';
import { bucketOf, type FeedbackDoc, type FeedDoc, type FeedStore } from './feed-store';
import { FeedUseCases } from './feed-use-cases';
import { feedbackOwed } from './feedback-reaction';
import { NcmecClient } from './ncmec-client';
import { StopNciiClient } from './stopncii-client';

// The feeds' unit specs: the runner, the use cases, the exchange clients and the feedback reaction over in-memory
// fakes of the stores and a scripted HTTP client (the integration test, hash-feeds.int.test.ts, runs them for real).

/**
 * FeedStore in memory, with the store's claim semantics (one winner per key, a claim never recorded taken over after
 * the lease), for the feeds' unit specs.
 */
class MemoryFeedStore {
  readonly feeds = new Map<string, FeedDoc>();
  readonly claims = new MemoryClaims<{ _id: string; of: string; at: Date }>();
  /** Writes of feeds and feedback jobs that fail (nothing written), the next ones first. */
  failedSets = 0;
  readonly items = new Map<string, Set<string>>();
  readonly feedback = new Map<string, FeedbackDoc>();

  asStore(): FeedStore {
    return this as unknown as FeedStore;
  }

  insert(feed: FeedDoc) {
    this.feeds.set(feed._id, structuredClone(feed));
    return Promise.resolve();
  }
  get(id: string) {
    const feed = this.feeds.get(id);
    return Promise.resolve(feed ? structuredClone(feed) : null);
  }
  ofBank(bankId: string) {
    return Promise.resolve([...this.feeds.values()].filter((feed) => feed.bankId === bankId).map((f) => ({ ...f })));
  }
  set(id: string, fields: Partial<FeedDoc>, unset: (keyof FeedDoc)[] = []) {
    if (this.failedWrite()) return Promise.reject(new UnavailableError('database unavailable'));
    const feed = this.feeds.get(id);
    if (feed) {
      Object.assign(feed, fields);
      for (const key of unset) delete feed[key];
    }
    return Promise.resolve();
  }
  delete(id: string) {
    this.feeds.delete(id);
    this.items.delete(id);
    return Promise.resolve();
  }
  dueIn(bucket: number) {
    return Promise.resolve([...this.feeds.values()].filter((feed) => feed.due === bucket).map((f) => ({ ...f })));
  }
  allEnabled() {
    return Promise.resolve([...this.feeds.values()].filter((feed) => feed.enabled).map((f) => ({ ...f })));
  }
  claimRun(feed: FeedDoc, now: Date, leaseMs: number) {
    return this.claimDue(feed._id, feed.dueAt, now, leaseMs, () => {
      const current = this.feeds.get(feed._id);
      return current?.enabled === true && current.dueAt.getTime() === feed.dueAt.getTime();
    });
  }
  claimFeedback(job: FeedbackDoc, now: Date, leaseMs: number) {
    return this.claimDue(job._id, job.dueAt, now, leaseMs, () => {
      const current = this.feedback.get(job._id);
      return current?.state === 'pending' && current.dueAt.getTime() === job.dueAt.getTime();
    });
  }
  private async claimDue(of: string, dueAt: Date, now: Date, leaseMs: number, stillDue: () => boolean) {
    const key = `${of}@${dueAt.getTime()}`;
    const claimed = await claimInChain(this.claims, {
      key: (step) => (step === 0 ? key : `${key}#${step}`),
      fields: { of },
      now,
      leaseMs,
      unrecorded: () => Promise.resolve(stillDue()),
    });
    return claimed.won ? { deadClaims: claimed.deadClaims } : ('held' as const);
  }
  private failedWrite(): boolean {
    if (this.failedSets === 0) return false;
    this.failedSets -= 1;
    return true;
  }
  /** The times the runner pruned claims at. */
  readonly prunedAt: Date[] = [];
  pruneClaims(now: Date) {
    this.prunedAt.push(now);
    return Promise.resolve(0);
  }
  itemsOf(feedId: string) {
    return Promise.resolve([...(this.items.get(feedId) ?? [])]);
  }
  addItems(feedId: string, ids: readonly string[]) {
    const set = this.items.get(feedId) ?? new Set<string>();
    ids.forEach((id) => set.add(id));
    this.items.set(feedId, set);
    return Promise.resolve();
  }
  removeItems(feedId: string, ids: readonly string[]) {
    ids.forEach((id) => this.items.get(feedId)?.delete(id));
    return Promise.resolve();
  }
  queueFeedback(doc: FeedbackDoc) {
    if (this.feedback.has(doc._id)) return Promise.resolve(false);
    this.feedback.set(doc._id, { ...doc });
    return Promise.resolve(true);
  }
  feedbackDueIn(bucket: number) {
    return Promise.resolve([...this.feedback.values()].filter((job) => job.due === bucket).map((j) => ({ ...j })));
  }
  pendingFeedback() {
    return Promise.resolve([...this.feedback.values()].filter((job) => job.state === 'pending').map((j) => ({ ...j })));
  }
  getFeedback(id: string) {
    return Promise.resolve(this.feedback.get(id) ?? null);
  }
  setFeedback(id: string, fields: Partial<FeedbackDoc>, unset: (keyof FeedbackDoc)[] = []) {
    if (this.failedWrite()) return Promise.reject(new UnavailableError('database unavailable'));
    const job = this.feedback.get(id);
    if (job) {
      Object.assign(job, fields);
      for (const key of unset) delete job[key];
    }
    return Promise.resolve();
  }
}

/** The bank store's operations the feeds use, in memory: one bank per id, hashes by their keyed ids. */
class MemoryBanks {
  readonly banks = new Map<string, BankDoc>();
  readonly hashes = new Map<string, HashDoc>();

  asStore(): HashBankStore {
    return this as unknown as HashBankStore;
  }

  addBank(id: string, tenantId: string, kind: BankDoc['kind']): BankDoc {
    const now = new Date(0);
    const bank: BankDoc = {
      _id: id,
      tenantId,
      name: id,
      kind,
      distance: kind === 'pdq' ? 31 : 0,
      action: 'flag',
      negative: false,
      enabled: true,
      salt: `salt-${id}`,
      createdAt: now,
      updatedAt: now,
    };
    this.banks.set(id, bank);
    return bank;
  }
  getBank(tenantId: string, bankId: string) {
    const bank = this.banks.get(bankId);
    if (!bank || bank.tenantId !== tenantId) return Promise.reject(new NotFoundError('hash bank not found'));
    return Promise.resolve(bank);
  }
  async addHashes(
    tenantId: string,
    bankId: string,
    rows: readonly { value: string; metadata: HashMetadata }[],
    followUp?: AddFollowUp,
  ) {
    const bank = await this.getBank(tenantId, bankId);
    const added: HashDoc[] = [];
    for (const row of rows) {
      const _id = hashIdOf(bank, row.value);
      if (this.hashes.has(_id)) continue;
      const doc: HashDoc = { ...newHash(tenantId, bankId, _id, row, new Date(0)), change: 'c' };
      this.hashes.set(_id, doc);
      added.push(doc);
    }
    await followUp?.run(added);
    return { added, duplicates: rows.length - added.length };
  }
  withdrawHashes(_tenantId: string, bankId: string, ids: readonly string[]) {
    let count = 0;
    for (const id of ids) {
      if (this.hashes.get(id)?.bankId === bankId) {
        this.hashes.delete(id);
        count += 1;
      }
    }
    return Promise.resolve(count);
  }
  hashesById(ids: readonly string[]) {
    return Promise.resolve(ids.map((id) => this.hashes.get(id)).filter((doc): doc is HashDoc => doc !== undefined));
  }
  values(bankId: string): string[] {
    return [...this.hashes.values()]
      .filter((hash) => hash.bankId === bankId)
      .map((hash) => hash.value)
      .sort();
  }
}

/** A FeedHttp that answers from a function of the URL and call, and records the calls; no socket. */
class ScriptedHttp {
  readonly calls: { url: string; call: FeedCall }[] = [];

  constructor(public answer: (url: string, call: FeedCall) => FeedAnswer) {}

  asHttp(): FeedHttp {
    return this as unknown as FeedHttp;
  }

  refusal(url: string) {
    return url.startsWith('https://') || url.startsWith('http://127.0.0.1') ? undefined : 'refused';
  }
  call(url: string, call: FeedCall = {}) {
    this.calls.push({ url, call });
    return Promise.resolve(this.answer(url, call));
  }
  async expect(what: string, url: string, call: FeedCall = {}) {
    const answer = await this.call(url, call);
    if (!answer.ok) throw new FeedError(answer.failure, `${what}: ${answer.failure}`);
    return answer;
  }
  close() {
    return Promise.resolve();
  }
}

const ok = (text: string, headers: Record<string, string> = {}, status = 200): FeedAnswer => ({
  ok: true,
  status,
  text,
  headers,
});

const TENANT = 'ten_1';
const md5 = (n: number) => n.toString(16).padStart(32, '0');
const silent = pino({ level: 'silent' });

function setup(
  answer: (url: string, call: FeedCall) => FeedAnswer,
  at = new Date('2026-01-01T00:00:00Z'),
  bankStore?: (now: () => Date) => HashBankStore,
) {
  const feeds = new MemoryFeedStore();
  const banks = new MemoryBanks();
  const http = new ScriptedHttp(answer);
  const box = new SecretBox([randomBytes(32)]);
  const clock = { now: at };
  /** The claims taken over from replicas that never recorded them, by job. */
  const deadClaims: string[] = [];
  const store = bankStore?.(() => clock.now) ?? banks.asStore();
  const runner = (): FeedRunner =>
    new FeedRunner({
      feeds: feeds.asStore(),
      banks: store,
      http: http.asHttp(),
      box,
      log: silent,
      pollMs: 1000,
      retry: { initialMs: 1000, maxMs: 60_000 },
      maxPages: 3,
      feedbackAttempts: 2,
      leaseMs: 60_000,
      onDeadClaims: (job, count) => deadClaims.push(...Array<string>(count).fill(job)),
      now: () => clock.now,
    });
  const useCases = new FeedUseCases({
    feeds: feeds.asStore(),
    banks: store,
    http: http.asHttp(),
    box,
    wake: () => undefined,
    now: () => clock.now,
  });
  return { feeds, banks, store, http, box, clock, deadClaims, runner, useCases };
}

/** A StopNCII feed of bnk_1 whose own run is an hour away, so that a poll sends only the feedback owed. */
async function stopnciiFeed({
  useCases,
  feeds,
  clock,
}: Pick<ReturnType<typeof setup>, 'useCases' | 'feeds' | 'clock'>) {
  const keys = { subscriptionKey: 's', fetchFunctionKey: 'f', feedbackFunctionKey: 'b' };
  const feed = await useCases.create(TENANT, 'bnk_1', {
    source: 'stopncii',
    url: 'https://stopncii.test',
    intervalS: 3600,
    credentialsJson: JSON.stringify(keys),
  });
  await feeds.set(feed._id, { due: undefined, dueAt: new Date(clock.now.getTime() + 3600_000) });
  return feed;
}

/** The feedback `Blocked` owed to the feed for a hash, due at `at`. */
const feedbackJob = (feedId: string, hashId: string, at: Date): FeedbackDoc => ({
  _id: `${feedId}:${hashId}`,
  tenantId: TENANT,
  feedId,
  hashId,
  value: 'Blocked',
  state: 'pending',
  attempts: 0,
  dueAt: at,
  due: bucketOf(at),
  createdAt: at,
  updatedAt: at,
});

describe('FeedRunner', () => {
  it('runs a due feed on one replica only: two runners polling together make one fetch', async () => {
    const { banks, useCases, runner, http, feeds } = setup(() => ok(`${md5(1)}\n`));
    banks.addBank('bnk_1', TENANT, 'md5');
    const feed = await useCases.create(TENANT, 'bnk_1', { source: 'file', url: 'https://x/h.csv', intervalS: 60 });
    await Promise.all([runner().poll(), runner().poll()]);
    expect(http.calls).toHaveLength(1);
    expect(banks.values('bnk_1')).toEqual([md5(1)]);
    const after = feeds.feeds.get(feed._id)!;
    expect(after.lastRun).toMatchObject({ state: 'ok', added: 1, withdrawn: 0 });
    expect(after.dueAt.getTime() - after.lastRun!.at.getTime()).toBe(60_000);
  });

  it('a stale candidate (read before another replica ran the feed) finds its claim taken', async () => {
    const { banks, useCases, runner, http, feeds } = setup(() => ok(`${md5(1)}\n`));
    banks.addBank('bnk_1', TENANT, 'md5');
    const feed = await useCases.create(TENANT, 'bnk_1', { source: 'file', url: 'https://x/h.csv', intervalS: 60 });
    const stale = structuredClone(feeds.feeds.get(feed._id)!);
    expect(await runner().runClaimed(stale)).toBe(true);
    expect(await runner().runClaimed(stale)).toBe(false);
    expect(http.calls).toHaveLength(1);
  });

  const lostClaimReply = (feeds: MemoryFeedStore) => feeds.claims.loseNextReply();
  const failedDueWrite = (feeds: MemoryFeedStore) => (feeds.failedSets = 1);
  it.each([
    ['whose reply was lost', lostClaimReply],
    ['whose due time was never moved (its write failed)', failedDueWrite],
  ])('runs a feed after a claim %s, once that claim is older than the lease, on one replica', async (_name, fault) => {
    const { banks, useCases, runner, http, feeds, clock, deadClaims } = setup(() => ok(`${md5(1)}\n`));
    banks.addBank('bnk_1', TENANT, 'md5');
    const feed = await useCases.create(TENANT, 'bnk_1', { source: 'file', url: 'https://x/h.csv', intervalS: 3600 });
    const stale = structuredClone(feeds.feeds.get(feed._id)!);
    fault(feeds);
    await expect(runner().poll()).rejects.toThrow();
    // Within the lease the claimant may still move the due time: the feed is left alone.
    clock.now = new Date(clock.now.getTime() + 59_000);
    await runner().poll();
    expect(http.calls).toHaveLength(0);
    clock.now = new Date(clock.now.getTime() + 2_000);
    await Promise.all([runner().poll(), runner().poll()]);
    expect(http.calls).toHaveLength(1);
    expect(feeds.feeds.get(feed._id)!.lastRun).toMatchObject({ state: 'ok', added: 1 });
    expect(deadClaims).toEqual(['run']);
    // A candidate read before the run finds nothing left to take.
    expect(await runner().runClaimed(stale)).toBe(false);
    expect(http.calls).toHaveLength(1);
  });

  it('withdraws the hashes the feed brought that left the file, and not those it did not bring', async () => {
    let file = `${md5(1)}\n${md5(2)}\n`;
    const { banks, useCases, runner, feeds, clock } = setup(() => ok(file, { etag: '"v1"' }));
    banks.addBank('bnk_1', TENANT, 'md5');
    await banks.addHashes(TENANT, 'bnk_1', [{ value: md5(3), metadata: {} }]);
    const feed = await useCases.create(TENANT, 'bnk_1', { source: 'file', url: 'https://x/h.csv', intervalS: 60 });
    await runner().poll();
    file = `${md5(2)}\n${md5(4)}\n`;
    clock.now = new Date(clock.now.getTime() + 61_000);
    await runner().runClaimed(feeds.feeds.get(feed._id)!);
    expect(banks.values('bnk_1')).toEqual([md5(2), md5(3), md5(4)]);
    expect(feeds.feeds.get(feed._id)!.lastRun).toMatchObject({ state: 'ok', added: 1, withdrawn: 1, duplicates: 1 });
    expect(feeds.feeds.get(feed._id)!.etag).toBe('"v1"');
  });

  it.each<[string, (db: MemoryDb, feeds: MemoryFeedStore) => void]>([
    ["the insert's reply is lost", (db) => db.fail(COLLECTIONS.bankHashes, 'insertMany', 'lost')],
    [
      'the items are not recorded',
      (_db, feeds) => {
        const addItems = feeds.addItems.bind(feeds);
        feeds.addItems = () => {
          feeds.addItems = addItems;
          return Promise.reject(new UnavailableError('database unavailable'));
        };
      },
    ],
  ])('withdraws a hash a failed run wrote when %s, once the file drops it', async (_name, fault) => {
    const db = new MemoryDb();
    let file = `${md5(1)}\n${md5(2)}\n${md5(3)}\n`;
    const { store, useCases, runner, feeds, clock } = setup(
      () => ok(file),
      undefined,
      (now) => new HashBankStore(db.asDb(), now),
    );
    const bank = await store.createBank(TENANT, {
      name: 'B',
      kind: 'md5',
      distance: 0,
      action: 'flag',
      negative: false,
      enabled: true,
    });
    // Added by hand: not the feed's to withdraw.
    await store.addHashes(TENANT, bank._id, [{ value: md5(3), metadata: {} }]);
    const feed = await useCases.create(TENANT, bank._id, { source: 'file', url: 'https://x/h.csv', intervalS: 60 });
    fault(db, feeds);
    await runner().runClaimed(feeds.feeds.get(feed._id)!);
    expect(feeds.feeds.get(feed._id)!.lastRun).toMatchObject({ state: 'failed', failure: 'store' });

    // The next run, after the backoff: the file no longer holds md5(1) nor md5(3).
    file = `${md5(2)}\n`;
    clock.now = new Date(clock.now.getTime() + 61_000);
    await runner().runClaimed(feeds.feeds.get(feed._id)!);
    expect(feeds.feeds.get(feed._id)!.lastRun).toMatchObject({ state: 'ok', withdrawn: 1 });
    const values = (await store.snapshot(TENANT)).hashes.map((hash) => hash.value).sort();
    expect(values).toEqual([md5(2), md5(3)]);
    expect(await feeds.itemsOf(feed._id)).toEqual([hashIdOf(bank, md5(2))]);
  });

  it('sends the stored validators and records a 304 as unchanged, writing nothing', async () => {
    const { banks, useCases, runner, feeds, http } = setup((_url, call) =>
      call.headers?.['if-none-match'] === '"v1"' ? ok('', {}, 304) : ok(`${md5(1)}\n`, { etag: '"v1"' }),
    );
    banks.addBank('bnk_1', TENANT, 'md5');
    const feed = await useCases.create(TENANT, 'bnk_1', { source: 'file', url: 'https://x/h.csv', intervalS: 60 });
    await runner().runClaimed(feeds.feeds.get(feed._id)!);
    await runner().runClaimed(feeds.feeds.get(feed._id)!);
    expect(http.calls[1]!.call.headers).toMatchObject({ 'if-none-match': '"v1"' });
    expect(feeds.feeds.get(feed._id)!.lastRun).toMatchObject({ state: 'unchanged', added: 0 });
  });

  const upstream500: FeedAnswer = { ok: false, failure: 'http_status', status: 500 };
  it.each([
    ['a 500', upstream500, 'http_status'],
    ['a bad row', ok(`${md5(1)}\nnope\n`), 'invalid_file'],
    ['an empty file', ok('# nothing\n'), 'invalid_file'],
  ])('reports %s as a failed run, writes nothing, and retries after a backoff within the interval', async (...c) => {
    const [, answer, failure] = c;
    const { banks, useCases, runner, feeds, clock } = setup(() => answer);
    banks.addBank('bnk_1', TENANT, 'md5');
    const feed = await useCases.create(TENANT, 'bnk_1', { source: 'file', url: 'https://x/h.csv', intervalS: 3600 });
    await runner().runClaimed(feeds.feeds.get(feed._id)!);
    const after = feeds.feeds.get(feed._id)!;
    expect(after.lastRun).toMatchObject({ state: 'failed', failure });
    expect(after.failures).toBe(1);
    const delay = after.dueAt.getTime() - clock.now.getTime();
    expect(delay).toBeGreaterThanOrEqual(500);
    expect(delay).toBeLessThanOrEqual(1000);
    expect(after.due).toBe(bucketOf(after.dueAt));
    expect(banks.values('bnk_1')).toEqual([]);
  });

  it('deletes a feed whose bank was deleted', async () => {
    const { banks, useCases, runner, feeds } = setup(() => ok(`${md5(1)}\n`));
    banks.addBank('bnk_1', TENANT, 'md5');
    const feed = await useCases.create(TENANT, 'bnk_1', { source: 'file', url: 'https://x/h.csv', intervalS: 60 });
    banks.banks.delete('bnk_1');
    await runner().runClaimed(feeds.feeds.get(feed._id)!);
    expect(feeds.feeds.has(feed._id)).toBe(false);
  });

  it('runs a StopNCII feed again at once while the API holds more pages than a run reads', async () => {
    const page = (n: number) =>
      JSON.stringify({
        nextPageToken: String(n + 1),
        nextSetTimestamp: 100 + n,
        hasMoreRecords: true,
        hashRecords: [{ signalType: 'ImagePDQ', hashValue: `${n}`.padStart(64, 'a'), hashStatus: 'Active' }],
      });
    let n = 0;
    const { banks, useCases, runner, feeds, clock } = setup(() => ok(page(n++)));
    banks.addBank('bnk_1', TENANT, 'pdq');
    const credentialsJson = JSON.stringify({ subscriptionKey: 's', fetchFunctionKey: 'f' });
    const feed = await useCases.create(TENANT, 'bnk_1', { source: 'stopncii', intervalS: 3600, credentialsJson });
    expect(feed.url).toBe('https://api.stopncii.org/v1');
    await runner().runClaimed(feeds.feeds.get(feed._id)!);
    const after = feeds.feeds.get(feed._id)!;
    expect(after.checkpoint).toBe('102');
    expect(after.dueAt.getTime()).toBe(clock.now.getTime());
    expect(after.lastRun).toMatchObject({ state: 'ok', added: 3 });
  });

  it('sends the feedback owed, once, and keeps it failed after its attempts', async () => {
    let fail = false;
    const { banks, useCases, runner, feeds, http, clock } = setup((url) =>
      fail && url.endsWith('/SubmitFeedback') ? { ok: false, failure: 'http_status', status: 503 } : ok('{}'),
    );
    const bank = banks.addBank('bnk_1', TENANT, 'pdq');
    const feed = await stopnciiFeed({ useCases, feeds, clock });
    const value = 'ab'.repeat(32);
    const [hash] = (await banks.addHashes(TENANT, 'bnk_1', [{ value, metadata: {} }])).added;
    const job = (hashId: string) => feedbackJob(feed._id, hashId, clock.now);
    await feeds.queueFeedback(job(hash!._id));
    expect(await feeds.queueFeedback(job(hash!._id))).toBe(false);
    await runner().poll();
    const sent = http.calls.filter((call) => call.url.endsWith('/SubmitFeedback'));
    expect(sent).toHaveLength(1);
    expect(sent[0]!.call.headers).toMatchObject({ 'x-functions-key': 'b', 'Ocp-Apim-Subscription-Key': 's' });
    expect(JSON.parse(sent[0]!.call.body!)).toEqual({
      count: 1,
      hashFeedbacks: [{ hashValue: value, feedbackValue: 'Blocked', tags: [] }],
    });
    expect(feeds.feedback.get(`${feed._id}:${hash!._id}`)).toMatchObject({ state: 'sent', attempts: 1 });

    fail = true;
    const other = hashIdOf(bank, 'cd'.repeat(32));
    await banks.addHashes(TENANT, 'bnk_1', [{ value: 'cd'.repeat(32), metadata: {} }]);
    await feeds.queueFeedback(job(other));
    const id = `${feed._id}:${other}`;
    await runner().sendClaimed(feeds.feedback.get(id)!);
    expect(feeds.feedback.get(id)).toMatchObject({ state: 'pending', attempts: 1 });
    await runner().sendClaimed(feeds.feedback.get(id)!);
    expect(feeds.feedback.get(id)).toMatchObject({ state: 'failed', attempts: 2 });
    expect(feeds.feedback.get(id)!.due).toBeUndefined();
  });
});

describe('FeedRunner sweep', () => {
  it('prunes old claims with each sweep, every ten minutes, not at every poll', async () => {
    const { runner, feeds, clock } = setup(() => ok(''));
    const one = runner();
    const start = clock.now;
    await one.poll();
    clock.now = new Date(start.getTime() + 9 * 60_000);
    await one.poll();
    clock.now = new Date(start.getTime() + 10 * 60_000);
    await one.poll();
    expect(feeds.prunedAt).toEqual([start, clock.now]);
  });
});

describe('FeedRunner feedback after a dead claim', () => {
  it.each([
    ['whose reply was lost', (feeds: MemoryFeedStore) => feeds.claims.loseNextReply()],
    ['whose due time was never moved (its write failed)', (feeds: MemoryFeedStore) => (feeds.failedSets = 1)],
  ])('sends feedback after a claim %s, once that claim is older than the lease', async (_name, fault) => {
    const { banks, useCases, runner, feeds, http, clock, deadClaims } = setup(() => ok('{}'));
    banks.addBank('bnk_1', TENANT, 'pdq');
    const feed = await stopnciiFeed({ useCases, feeds, clock });
    const [hash] = (await banks.addHashes(TENANT, 'bnk_1', [{ value: 'ab'.repeat(32), metadata: {} }])).added;
    const id = `${feed._id}:${hash!._id}`;
    await feeds.queueFeedback(feedbackJob(feed._id, hash!._id, clock.now));
    const sent = () => http.calls.filter((call) => call.url.endsWith('/SubmitFeedback')).length;
    fault(feeds);
    await expect(runner().sendClaimed(feeds.feedback.get(id)!)).rejects.toThrow();
    clock.now = new Date(clock.now.getTime() + 59_000);
    expect(await runner().sendClaimed(feeds.feedback.get(id)!)).toBe(false);
    clock.now = new Date(clock.now.getTime() + 2_000);
    await runner().poll();
    expect(sent()).toBe(1);
    expect(feeds.feedback.get(id)).toMatchObject({ state: 'sent', attempts: 1 });
    expect(deadClaims).toEqual(['feedback']);
  });
});

describe('FeedUseCases', () => {
  const create = (input: Partial<Parameters<FeedUseCases['create']>[2]>) => {
    const { banks, useCases } = setup(() => ok(''));
    banks.addBank('bnk_1', TENANT, 'md5');
    return useCases.create(TENANT, 'bnk_1', { source: 'file', url: 'https://x/h.csv', intervalS: 60, ...input });
  };

  it.each([
    ['an unknown source', { source: 'ftp' }, 'source'],
    ['an interval under a minute', { intervalS: 59 }, 'intervalSeconds'],
    ['an interval over a week', { intervalS: 7 * 24 * 3600 + 1 }, 'intervalSeconds'],
    ['plain http to a public host', { url: 'http://example.com/h.csv' }, 'url'],
    ['a file feed without a URL', { url: '' }, 'url'],
    ['credentials that are not JSON', { credentialsJson: '{' }, 'credentials'],
    ['credentials of another source', { credentialsJson: '{"username":"u","password":"p"}' }, 'credentials'],
    ['an exchange without credentials', { source: 'ncmec', url: '' }, 'credentials'],
  ])('refuses %s with validation_error naming the field', async (_name, input, field) => {
    await expect(create(input)).rejects.toMatchObject({
      code: 'validation_error',
      details: { issues: expect.arrayContaining([expect.objectContaining({ path: expect.arrayContaining([field]) })]) },
    });
  });

  it('seals the credentials for this feed only, and refuses to store them without a key', async () => {
    const { banks, useCases, box, feeds } = setup(() => ok(''));
    banks.addBank('bnk_1', TENANT, 'md5');
    const feed = await useCases.create(TENANT, 'bnk_1', {
      source: 'file',
      url: 'https://x/h.csv',
      intervalS: 60,
      credentialsJson: '{"authorization":"Bearer t0ken"}',
    });
    const sealed = feeds.feeds.get(feed._id)!.credentials!;
    expect(sealed).not.toContain('t0ken');
    expect(box.open(sealed, credentialsContext(feed))).toEqual({
      ok: true,
      plaintext: '{"authorization":"Bearer t0ken"}',
    });
    expect(box.open(sealed, credentialsContext({ ...feed, _id: 'fed_other' })).ok).toBe(false);

    const keyless = new FeedUseCases({
      feeds: feeds.asStore(),
      banks: banks.asStore(),
      http: new ScriptedHttp(() => ok('')).asHttp(),
      wake: () => undefined,
    });
    await expect(
      keyless.create(TENANT, 'bnk_1', {
        source: 'file',
        url: 'https://x/h.csv',
        intervalS: 60,
        credentialsJson: '{"authorization":"x"}',
      }),
    ).rejects.toMatchObject({ code: 'failed_precondition' });
  });

  it('holds a bank to 5 feeds, and another tenant finds neither the bank nor its feeds', async () => {
    const { banks, useCases } = setup(() => ok(''));
    banks.addBank('bnk_1', TENANT, 'md5');
    const input = { source: 'file', url: 'https://x/h.csv', intervalS: 60 };
    const feeds = [];
    for (let i = 0; i < 5; i++) feeds.push(await useCases.create(TENANT, 'bnk_1', input));
    await expect(useCases.create(TENANT, 'bnk_1', input)).rejects.toMatchObject({ code: 'conflict' });
    await expect(useCases.list('ten_2', 'bnk_1')).rejects.toMatchObject({ code: 'not_found' });
    await expect(useCases.run('ten_2', 'bnk_1', feeds[0]!._id)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a changed URL forgets the validators and checkpoint; disabling takes the feed out of the buckets', async () => {
    const { banks, useCases, feeds } = setup(() => ok(''));
    banks.addBank('bnk_1', TENANT, 'md5');
    const feed = await useCases.create(TENANT, 'bnk_1', { source: 'file', url: 'https://x/h.csv', intervalS: 60 });
    await feeds.set(feed._id, { etag: '"v1"', checkpoint: '5' });
    const moved = await useCases.update(TENANT, 'bnk_1', feed._id, { url: 'https://y/h.csv', enabled: false });
    expect(moved).toMatchObject({ url: 'https://y/h.csv', enabled: false });
    expect(moved.etag).toBeUndefined();
    expect(moved.checkpoint).toBeUndefined();
    expect(moved.due).toBeUndefined();
    await expect(useCases.run(TENANT, 'bnk_1', feed._id)).rejects.toMatchObject({ code: 'failed_precondition' });
  });
});

describe('the exchange clients', () => {
  it("StopNCII: takes the bank kind's signal type, skips others and bad values, and reads withdrawals", async () => {
    const http = new ScriptedHttp(() =>
      ok(
        JSON.stringify({
          nextPageToken: null,
          nextSetTimestamp: 77,
          hasMoreRecords: false,
          hashRecords: [
            { signalType: 'ImagePDQ', hashValue: 'AB'.repeat(32), hashStatus: 'Active' },
            { signalType: 'VideoMD5', hashValue: md5(1), hashStatus: 'Active' },
            { signalType: 'ImagePDQ', hashValue: 'xyz', hashStatus: 'Active' },
            { signalType: 'ImagePDQ', hashValue: 'cd'.repeat(32), hashStatus: 'Withdrawn' },
          ],
        }),
      ),
    );
    const client = new StopNciiClient(http.asHttp(), 'https://s', { subscriptionKey: 's', fetchFunctionKey: 'f' });
    const pull = await client.pull({ kind: 'pdq' }, '42', 'fed_1', 5);
    expect(http.calls[0]!.url).toBe('https://s/FetchHashes?startTimestamp=42&pageSize=800');
    expect(pull).toEqual({
      kind: 'delta',
      rows: [{ value: 'ab'.repeat(32), metadata: { source: 'stopncii', feed: 'fed_1', signalType: 'ImagePDQ' } }],
      withdrawn: ['cd'.repeat(32)],
      skipped: 2,
      checkpoint: '77',
      more: false,
    });
  });

  it('StopNCII: an answer of another shape fails the run as invalid_file', async () => {
    const client = new StopNciiClient(new ScriptedHttp(() => ok('<html>')).asHttp(), 'https://s', {
      subscriptionKey: 's',
      fetchFunctionKey: 'f',
    });
    await expect(client.pull({ kind: 'pdq' }, undefined, 'fed_1', 5)).rejects.toMatchObject({
      failure: 'invalid_file',
    });
  });

  const ncmecPage = (entries: string, next?: string) =>
    `<?xml version="1.0"?><queryResult xmlns="https://hashsharing.ncmec.org/hashsharing/v2"><images>${entries}</images>` +
    (next ? `<paging><next>${next}</next></paging>` : '') +
    '</queryResult>';

  it('NCMEC: follows the pages, takes the fingerprint of the bank kind, and withdraws deleted entries', async () => {
    const pages = [
      ncmecPage(
        `<image><id>1</id><member id="9">M</member><fingerprints><MD5>${md5(1).toUpperCase()}</MD5><sha1>x</sha1></fingerprints></image>` +
          `<image><id>2</id><member id="9">M</member><fingerprints><pdq>${'a'.repeat(64)}</pdq></fingerprints></image>`,
        '/v2/entries?from=a&amp;to=2026-01-01T00%3A00%3A00Z&amp;start=2',
      ),
      ncmecPage(
        `<deletedImage><id>3</id><member id="9">M</member><fingerprints><md5>${md5(3)}</md5></fingerprints></deletedImage>`,
      ),
    ];
    const http = new ScriptedHttp(() => ok(pages.shift()!));
    const client = new NcmecClient(http.asHttp(), 'https://n', { username: 'u', password: 'p' });
    const now = new Date('2026-01-01T00:00:00Z');
    const pull = await client.pull({ kind: 'md5' }, '1000', 'fed_1', 5, now);
    expect(http.calls.map((call) => call.url)).toEqual([
      'https://n/v2/entries?from=1970-01-01T00%3A16%3A40Z&to=2026-01-01T00%3A00%3A00Z',
      'https://n/v2/entries?from=a&to=2026-01-01T00%3A00%3A00Z&start=2',
    ]);
    expect(http.calls[0]!.call.headers?.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
    expect(pull).toEqual({
      kind: 'delta',
      rows: [{ value: md5(1), metadata: { source: 'ncmec', feed: 'fed_1', entry: '1', member: '9' } }],
      withdrawn: [md5(3)],
      skipped: 1,
      checkpoint: String(now.getTime() / 1000),
      more: false,
    });
  });

  it('NCMEC: a run that stops at its page bound resumes from the next page, then moves to the range end', async () => {
    const next = '/v2/entries?from=a&amp;to=2025-06-01T00%3A00%3A00Z&amp;start=2';
    const http = new ScriptedHttp(() => ok(ncmecPage('', next)));
    const client = new NcmecClient(http.asHttp(), 'https://n', { username: 'u', password: 'p' });
    const first = await client.pull({ kind: 'md5' }, undefined, 'fed_1', 1, new Date());
    expect(first).toMatchObject({
      more: true,
      checkpoint: 'next:/v2/entries?from=a&to=2025-06-01T00%3A00%3A00Z&start=2',
    });
    http.answer = () => ok(ncmecPage(''));
    const second = await client.pull(
      { kind: 'md5' },
      (first as { checkpoint: string }).checkpoint,
      'fed_1',
      1,
      new Date(),
    );
    expect(http.calls[1]!.url).toBe('https://n/v2/entries?from=a&to=2025-06-01T00%3A00%3A00Z&start=2');
    expect(second).toMatchObject({ more: false, checkpoint: String(Date.parse('2025-06-01T00:00:00Z') / 1000) });
  });

  it('DeltaBuilder: the last record of a hash wins', () => {
    const delta = new DeltaBuilder();
    delta.add('a', { n: '1' });
    delta.withdraw('a');
    delta.withdraw('b');
    delta.add('b', { n: '2' });
    expect(delta.build('c', false)).toMatchObject({ rows: [{ value: 'b', metadata: { n: '2' } }], withdrawn: ['a'] });
  });
});

describe('feedbackOwed', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const match = (metadata: Record<string, string>, extra: Record<string, unknown> = {}) => ({
    position: 1,
    bankId: 'bnk_1',
    bankName: 'NCII',
    kind: 'pdq',
    distance: 2,
    hashId: 'hsh_1',
    metadata,
    action: 'flag',
    ...extra,
  });
  const event = (data: Record<string, unknown>) =>
    ({
      type: 'RecordModerated',
      tenantId: TENANT,
      data: { status: 'Flagged', testMode: false, ...data },
    }) as never as DomainEvent;
  const stop = { source: 'stopncii', feed: 'fed_1' };

  it.each([
    ['a flag by a StopNCII hash', 1, event({ hashMatches: [match(stop)] })],
    ['the same hash twice in one batch', 1, event({ hashMatches: [match(stop), match(stop, { position: 2 })] })],
    ['a match a negative bank cancelled', 0, event({ hashMatches: [match(stop, { cancelledBy: 'hsh_9' })] })],
    ['a compliant record', 0, event({ status: 'Compliant', hashMatches: [match(stop)] })],
    ['a manual decision', 0, event({ actor: 'member:1', hashMatches: [match(stop)] })],
    ['test mode', 0, event({ testMode: true, hashMatches: [match(stop)] })],
    ['a hash of another source', 0, event({ hashMatches: [match({ source: 'ncmec', feed: 'fed_1' })] })],
    ['a hash added by hand', 0, event({ hashMatches: [match({ source: 'stopncii' })] })],
  ])('%s owes %d feedback', (_name, count, given) => {
    const owed = feedbackOwed([given], now);
    expect(owed).toHaveLength(count);
    if (count)
      expect(owed[0]).toMatchObject({ _id: 'fed_1:hsh_1', feedId: 'fed_1', value: 'Blocked', due: bucketOf(now) });
  });
});

describe('FeedHttp address rules', () => {
  const http = new FeedHttp({ policy: addressPolicy(['127.0.0.0/8']), maxBytes: 1, timeoutMs: 1 });
  afterAll(() => http.close());

  it.each([
    ['https to a public address', 'https://93.184.216.34/h.csv', undefined],
    ['https to a name (its addresses are checked at connection)', 'https://lists.example.org/h.csv', undefined],
    ['plain http to an allowed address', 'http://127.0.0.1:8080/h.csv', undefined],
    ['plain http to a public address', 'http://93.184.216.34/h.csv', 'refused'],
    ['plain http to a name', 'http://lists.example.org/h.csv', 'refused'],
    ['https to a private address', 'https://10.0.0.1/h.csv', 'refused'],
    ['a metadata address', 'https://169.254.169.254/latest', 'refused'],
    ['credentials in the URL', 'https://user:pass@lists.example.org/h.csv', 'refused'],
    ['another scheme', 'ftp://93.184.216.34/h.csv', 'refused'],
    ['not a URL', 'lists', 'refused'],
  ])('%s: %s', (_name, url, expected) => {
    expect(http.refusal(url)).toBe(expected);
  });
});
