import { SecretBox, tdbTokenContext, type DomainEvent, type TdbConfigDoc, type TdbSubmissionDoc } from '@vigil/proto';
import { type TdbRetryDoc } from './tdb-docs';
import { MongoNetworkError, MongoServerError } from 'mongodb';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { TdbStore } from '../store/tdb-store';
import type { TdbCallResult, TdbClient } from './tdb-client';
import { recordModerated } from '../../../deploy/test-support/events';
import { TdbSubmissions } from './tdb-submissions';

const box = new SecretBox([randomBytes(32)]);
const config = (tenantId: string): TdbConfigDoc => ({
  _id: tenantId,
  sealed: box.seal('the-token', tdbTokenContext(tenantId)),
  hint: '…oken',
  baseUrl: 'https://tdb.example',
  territorialScope: ['DE'],
  defaults: { contentType: ['CONTENT_TYPE_TEXT'] },
  updatedAt: new Date(),
});

type Outcome = { id: string; outcome: { state: string } & Record<string, unknown>; error?: string };

/**
 * What the fake store refuses: the error a write of these documents or outcomes throws (one command, all or nothing),
 * or undefined when it takes them.
 */
interface Refusals {
  record?: (docs: TdbSubmissionDoc[]) => Error | undefined;
  outcomes?: (outcomes: Outcome[]) => Error | undefined;
  configOf?: (tenantId: string) => Error | undefined;
}

/** An in-memory TdbStore: tenants with submission on, recorded log documents, retries queued and settled. */
function fakeStore(on: string[], enabledAt = new Date('2026-01-01T00:00:00Z'), refuse: Refusals = {}) {
  const recorded: TdbSubmissionDoc[] = [];
  const retries: TdbRetryDoc[] = [];
  const settled: Array<{
    job: string;
    error?: string;
    outcomes: Map<string, { state: string } & Record<string, unknown>>;
  }> = [];
  const finished: Array<{ job: string; pending: string[] }> = [];
  /** The queue and log writes, in order. */
  const steps: string[] = [];
  const store = {
    configOf: (tenantId: string) => {
      const refused = refuse.configOf?.(tenantId);
      if (refused) return Promise.reject(refused);
      return Promise.resolve(on.includes(tenantId) ? { ...config(tenantId), enabledAt } : null);
    },
    record: (docs: TdbSubmissionDoc[]) => {
      const refused = refuse.record?.(docs);
      if (refused) return Promise.reject(refused);
      recorded.push(...docs);
      steps.push(`record ${docs.map((doc) => doc._id).join(',')}`);
      return Promise.resolve();
    },
    queueHeldRetry: (job: TdbRetryDoc) => {
      const held = { ...job, state: 'sending' as const, leaseId: `lease_${job._id}` };
      retries.push(held);
      steps.push(`hold ${job._id}`);
      return Promise.resolve(held);
    },
    releaseRetry: (job: TdbRetryDoc, dueAt: Date) => {
      const queued = retries.find((entry) => entry._id === job._id && entry.leaseId === job.leaseId);
      if (queued) Object.assign(queued, { state: 'pending', dueAt, leaseId: undefined });
      steps.push(`release ${job._id}`);
      return Promise.resolve();
    },
    recordOutcomes: (job: TdbRetryDoc, attempt: { error?: string } | undefined, outcomes: Outcome[]) => {
      const refused = refuse.outcomes?.(outcomes);
      if (refused) return Promise.reject(refused);
      settled.push({
        job: job._id,
        ...(attempt?.error ? { error: attempt.error } : {}),
        outcomes: new Map(outcomes.map(({ id, outcome, error }) => [id, { ...outcome, ...(error ? { error } : {}) }])),
      });
      return Promise.resolve();
    },
    finishRetry: (job: TdbRetryDoc, _attempt: unknown, outcomes: Outcome[]) => {
      const pending = outcomes.filter((entry) => entry.outcome.state === 'pending').map((entry) => entry.id);
      finished.push({ job: job._id, pending });
      return Promise.resolve();
    },
    claim: () => Promise.resolve([]),
    pruneLeases: () => Promise.resolve(0),
  };
  return { store: store as unknown as TdbStore, recorded, retries, settled, finished, steps };
}

/** What the store says when it refuses a document of its own accord (FerretDB: a key, a NUL): not retriable. */
const refusedByStore = () => new MongoServerError({ message: 'invalid key', code: 2 });

/** A client answering `result`, or what `result` gives for the call's puids (which may throw). */
function fakeClient(result: TdbCallResult | ((puids: string[]) => TdbCallResult), stored: string[] = []) {
  const calls: Array<{ token: string; puids: string[] }> = [];
  const client: TdbClient = {
    submit: async ({ token, statements }) => {
      const puids = statements.map((s) => s.puid);
      calls.push({ token, puids });
      await Promise.resolve();
      return typeof result === 'function' ? result(puids) : result;
    },
    exists: ({ puid }) => Promise.resolve(stored.includes(puid)),
    close: () => Promise.resolve(),
  };
  return { client, calls };
}

const flagged = (id: string, tenantId = 'ten_on', extra: Record<string, unknown> = {}): DomainEvent =>
  recordModerated(extra, { id, tenantId });

const options = (store: TdbStore, client: TdbClient) => ({
  store,
  client,
  secrets: box,
  log: pino({ level: 'silent' }),
  retryScheduleS: [1, 2],
  pollMs: 1000,
  leaseMs: 1000,
  concurrency: 1,
});

/** Options that also collect the log lines and the counts of results and statements set aside. */
function observed(store: TdbStore, client: TdbClient) {
  const lines: Array<Record<string, unknown>> = [];
  const counts = new Map<string, number>();
  const count = (key: string, n: number) => counts.set(key, (counts.get(key) ?? 0) + n);
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return {
    options: {
      ...options(store, client),
      log: pino({ level: 'info' }, sink),
      onResult: (result: string, n: number) => count(result, n),
      onSetAside: (reason: string, n: number) => count(`set_aside:${reason}`, n),
    },
    lines,
    counts,
  };
}

const created = (uuids: Array<[string, string]> = []): TdbCallResult => ({
  kind: 'created',
  durationMs: 1,
  statusCode: 201,
  uuids: new Map(uuids),
});

/** Three flags of tenant A and one of tenant B, in one call's batch. */
const twoTenants = () => [
  flagged('A1', 'ten_a'),
  flagged('A2', 'ten_a'),
  flagged('A3', 'ten_a'),
  flagged('B1', 'ten_b'),
];

describe('TdbSubmissions.submit', () => {
  it('submits restrictions of tenants with submission on, and nothing for test mode, lifts or other tenants', async () => {
    const { store, recorded, retries } = fakeStore(['ten_on']);
    const { client, calls } = fakeClient(created([['E1', 'uuid-1']]));
    await new TdbSubmissions(options(store, client)).submit([
      flagged('E1'),
      flagged('E2', 'ten_off'),
      flagged('E3', 'ten_on', { testMode: true }),
      flagged('E4', 'ten_on', { status: 'Compliant', previousStatus: 'Flagged' }),
    ]);
    expect(calls).toEqual([{ token: 'the-token', puids: ['E1'] }]);
    expect(recorded.map((doc) => doc._id)).toEqual(['tdb_E1']);
    expect(recorded[0]).toMatchObject({
      state: 'submitted',
      tdbUuid: 'uuid-1',
      attemptCount: 1,
      attempts: [{ statusCode: 201, batchSize: 1 }],
      payload: { puid: 'E1', territorial_scope: ['DE'] },
    });
    expect(retries).toEqual([]);
  });

  it('sends one call per tenant and 100 statements', async () => {
    const { store, recorded } = fakeStore(['ten_on', 'ten_two']);
    const { client, calls } = fakeClient(created());
    const events = [
      ...Array.from({ length: 150 }, (_, i) => flagged(`A${i}`)),
      ...Array.from({ length: 3 }, (_, i) => flagged(`B${i}`, 'ten_two')),
    ];
    await new TdbSubmissions(options(store, client)).submit(events);
    expect(calls.map((call) => call.puids.length).sort((a, b) => a - b)).toEqual([3, 50, 100]);
    expect(recorded).toHaveLength(153);
    expect(recorded.every((doc) => doc.state === 'submitted')).toBe(true);
  });

  it('leaves out decisions made before submission was turned on', async () => {
    const { store, recorded } = fakeStore(['ten_on'], new Date('2026-03-01T10:00:01.000Z'));
    const { client, calls } = fakeClient(created());
    await new TdbSubmissions(options(store, client)).submit([
      flagged('E1'),
      { ...flagged('E2'), occurredAt: '2026-03-01T10:00:02.000Z' },
    ]);
    expect(calls).toEqual([{ token: 'the-token', puids: ['E2'] }]);
    expect(recorded.map((doc) => doc._id)).toEqual(['tdb_E2']);
  });

  it("queues a failed call for a retry, and the tenant's next statements join a retry without a call", async () => {
    const { store, recorded, retries } = fakeStore(['ten_on']);
    const { client, calls } = fakeClient({ kind: 'failed', durationMs: 1, statusCode: 503, error: 'server_error' });
    const sender = new TdbSubmissions(options(store, client));
    await sender.submit([flagged('E1'), flagged('E2')]);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ submissionIds: ['tdb_E1', 'tdb_E2'], attemptCount: 1, state: 'pending' });
    expect(recorded.map((doc) => [doc.state, doc.batchId, doc.lastError])).toEqual([
      ['pending', retries[0]!._id, 'server_error'],
      ['pending', retries[0]!._id, 'server_error'],
    ]);
    await sender.submit([flagged('E3')]);
    expect(calls).toHaveLength(1);
    expect(retries[1]).toMatchObject({ submissionIds: ['tdb_E3'], attemptCount: 0 });
    expect(recorded[2]).toMatchObject({ state: 'pending', attemptCount: 0, attempts: [] });
  });

  it('on a refusal: a stored puid counts as submitted, another refusal fails, the rest go again at once', async () => {
    const { store, recorded, retries } = fakeStore(['ten_on']);
    const errors = new Map<number, Record<string, string[]>>([
      [0, { puid: ['The identifier given is not unique within this platform.'] }],
      [2, { category: ['The selected category is invalid.'] }],
    ]);
    const { client } = fakeClient({ kind: 'refused', durationMs: 1, statusCode: 422, errors }, ['E1']);
    await new TdbSubmissions(options(store, client)).submit([flagged('E1'), flagged('E2'), flagged('E3')]);
    const byId = new Map(recorded.map((doc) => [doc._id, doc]));
    expect(byId.get('tdb_E1')).toMatchObject({
      state: 'submitted',
      alreadyStored: true,
      attempts: [{ error: 'duplicate' }],
    });
    expect(byId.get('tdb_E3')).toMatchObject({
      state: 'failed',
      rejection: { category: ['The selected category is invalid.'] },
      attempts: [{ error: 'rejected' }],
    });
    expect(byId.get('tdb_E2')).toMatchObject({ state: 'pending', lastError: 'batch_refused' });
    expect(retries.map((job) => job.submissionIds)).toEqual([['tdb_E2']]);
    expect(retries[0]!.dueAt.getTime()).toBeLessThanOrEqual(Date.now());
  });

  it("holds a failed call's retry until its statements are logged, so that it never runs before their documents exist", async () => {
    const { store, retries, steps } = fakeStore(['ten_on']);
    const { client } = fakeClient({ kind: 'refused', durationMs: 1, statusCode: 422, errors: new Map() });
    await new TdbSubmissions(options(store, client)).submit([flagged('E1'), flagged('E2')]);
    const id = retries[0]!._id;
    expect(steps).toEqual([`hold ${id}`, 'record tdb_E1,tdb_E2', `release ${id}`]);
    expect(retries[0]).toMatchObject({ state: 'pending', submissionIds: ['tdb_E1', 'tdb_E2'] });
  });

  it('leaves a retry held when its log cannot be written: it is taken over when the hold ends', async () => {
    const unreachable = () => new MongoNetworkError('store away');
    const { store, retries, steps } = fakeStore(['ten_on'], undefined, { record: unreachable });
    const { client } = fakeClient({ kind: 'failed', durationMs: 1, statusCode: 503, error: 'server_error' });
    await expect(new TdbSubmissions(options(store, client)).submit([flagged('E1')])).rejects.toThrow('store away');
    expect(steps).toEqual([`hold ${retries[0]!._id}`]);
    expect(retries[0]).toMatchObject({ state: 'sending' });
  });

  it('records statements as skipped without the encryption key', async () => {
    const { store, recorded } = fakeStore(['ten_on']);
    const { client, calls } = fakeClient(created());
    await new TdbSubmissions({ ...options(store, client), secrets: undefined }).submit([flagged('E1')]);
    expect(calls).toEqual([]);
    expect(recorded[0]).toMatchObject({ state: 'skipped', skipReason: 'not_configured' });
  });
});

describe('TdbSubmissions.retry', () => {
  const job = (attemptCount: number): TdbRetryDoc => ({
    _id: 'tdbr_1',
    tenantId: 'ten_on',
    submissionIds: ['tdb_E1', 'tdb_E2'],
    payloads: [{ puid: 'E1' }, { puid: 'E2' }] as TdbRetryDoc['payloads'],
    state: 'sending',
    attemptCount,
    dueAt: new Date(),
    createdAt: new Date(),
    updatedAt: new Date(),
  });

  it('makes the call again and records the database ids', async () => {
    const { store, settled } = fakeStore(['ten_on']);
    const { client, calls } = fakeClient(created([['E2', 'uuid-2']]));
    await new TdbSubmissions(options(store, client)).retry(job(1));
    expect(calls).toEqual([{ token: 'the-token', puids: ['E1', 'E2'] }]);
    expect(settled[0]!.outcomes.get('tdb_E2')).toEqual({ state: 'submitted', tdbUuid: 'uuid-2' });
    expect(settled[0]!.outcomes.get('tdb_E1')).toEqual({ state: 'submitted' });
  });

  it('reschedules after a failed call, and fails the statements once the schedule is spent', async () => {
    const { store, settled } = fakeStore(['ten_on']);
    const { client } = fakeClient({ kind: 'failed', durationMs: 1, statusCode: 503, error: 'server_error' });
    const sender = new TdbSubmissions(options(store, client));
    await sender.retry(job(1));
    expect([...settled[0]!.outcomes.values()].map((o) => o.state)).toEqual(['pending', 'pending']);
    await sender.retry(job(2));
    expect([...settled[1]!.outcomes.values()].map((o) => o.state)).toEqual(['failed', 'failed']);
  });

  it('skips what waits for a retry once the deployment has no key to open the token', async () => {
    const { store, settled } = fakeStore(['ten_on']);
    const { client, calls } = fakeClient(created());
    await new TdbSubmissions({ ...options(store, client), secrets: undefined }).retry(job(1));
    expect(calls).toEqual([]);
    expect(settled[0]!.outcomes.get('tdb_E2')).toEqual({ state: 'skipped', reason: 'not_configured' });
  });

  it('skips what a tenant that turned submission off still had queued', async () => {
    const { store, settled } = fakeStore([]);
    const { client, calls } = fakeClient(created());
    await new TdbSubmissions(options(store, client)).retry(job(1));
    expect(calls).toEqual([]);
    expect(settled[0]!.outcomes.get('tdb_E1')).toEqual({ state: 'skipped', reason: 'disabled' });
  });
});

describe('TdbSubmissions isolation', () => {
  const refusedCategory = (index: number): TdbCallResult => ({
    kind: 'refused',
    durationMs: 1,
    statusCode: 422,
    errors: new Map([[index, { category: ['The selected category is invalid.'] }]]),
  });

  it("queues a tenant's statements whose answer cannot be processed, while another tenant's are submitted", async () => {
    const { store, recorded, retries } = fakeStore(['ten_a', 'ten_b']);
    const { client } = fakeClient((puids) => {
      if (puids.some((puid) => puid.startsWith('A'))) throw new TypeError('answer not understood');
      return created();
    });
    const { options: opts, counts } = observed(store, client);
    await new TdbSubmissions(opts).submit([flagged('A1', 'ten_a'), flagged('B1', 'ten_b'), flagged('A2', 'ten_a')]);
    const byId = new Map(recorded.map((doc) => [doc._id, doc]));
    expect(byId.get('tdb_B1')).toMatchObject({ state: 'submitted', attempts: [{ statusCode: 201 }] });
    for (const id of ['tdb_A1', 'tdb_A2']) {
      expect(byId.get(id)).toMatchObject({
        state: 'pending',
        lastError: 'processing_failed',
        batchId: retries[0]!._id,
        attempts: [{ error: 'processing_failed' }],
      });
    }
    expect(retries.map((job) => [job.tenantId, job.submissionIds])).toEqual([['ten_a', ['tdb_A1', 'tdb_A2']]]);
    expect(counts).toEqual(
      new Map([
        ['submitted', 1],
        ['processing_failed', 2],
      ]),
    );
  });

  it('fails the statements of an answer that cannot be processed once their retries are spent', async () => {
    const { store, settled, finished } = fakeStore(['ten_a']);
    const { client } = fakeClient(() => {
      throw new TypeError('answer not understood');
    });
    const job: TdbRetryDoc = {
      _id: 'tdbr_a',
      tenantId: 'ten_a',
      submissionIds: ['tdb_A1'],
      payloads: [{ puid: 'A1' }] as TdbRetryDoc['payloads'],
      state: 'sending',
      attemptCount: 2,
      dueAt: new Date(),
      createdAt: new Date(),
      updatedAt: new Date(),
    };
    await new TdbSubmissions(options(store, client)).retry(job);
    expect(settled[0]).toMatchObject({ error: 'processing_failed' });
    expect(settled[0]!.outcomes.get('tdb_A1')).toEqual({ state: 'failed' });
    expect(finished).toEqual([{ job: 'tdbr_a', pending: [] }]);
  });

  it("logs a statement without the database's answer when the store refuses it, and the others of its call", async () => {
    const { store, recorded, retries } = fakeStore(['ten_a', 'ten_b'], undefined, {
      record: (docs) => (docs.some((doc) => doc.rejection) ? refusedByStore() : undefined),
    });
    const { client } = fakeClient((puids) => (puids[0]!.startsWith('A') ? refusedCategory(1) : created()));
    const { options: opts, counts, lines } = observed(store, client);
    await new TdbSubmissions(opts).submit(twoTenants());
    const byId = new Map(recorded.map((doc) => [doc._id, doc]));
    expect(byId.get('tdb_A2')).toMatchObject({
      state: 'failed',
      lastError: 'rejected',
      attempts: [{ statusCode: 422 }],
    });
    expect(byId.get('tdb_A2')?.rejection).toBeUndefined();
    for (const id of ['tdb_A1', 'tdb_A3']) {
      expect(byId.get(id)).toMatchObject({ state: 'pending', lastError: 'batch_refused', batchId: retries[0]!._id });
    }
    expect(byId.get('tdb_B1')).toMatchObject({ state: 'submitted' });
    expect(counts.get('set_aside:answer_not_logged')).toBe(1);
    expect(lines.find((line) => line.submissionIds !== undefined)).toMatchObject({
      tenantId: 'ten_a',
      submissionIds: ['tdb_A2'],
      error: 'MongoServerError',
    });
  });

  it('sets aside, with a log line of ids and a count, a statement whose log entry the store refuses even so', async () => {
    const { store, recorded } = fakeStore(['ten_a', 'ten_b'], undefined, {
      record: (docs) => (docs.some((doc) => doc._id === 'tdb_A2') ? refusedByStore() : undefined),
    });
    const { client } = fakeClient(created());
    const { options: opts, counts, lines } = observed(store, client);
    await new TdbSubmissions(opts).submit(twoTenants());
    expect(recorded.map((doc) => [doc._id, doc.state]).sort()).toEqual([
      ['tdb_A1', 'submitted'],
      ['tdb_A3', 'submitted'],
      ['tdb_B1', 'submitted'],
    ]);
    expect(counts.get('set_aside:not_logged')).toBe(1);
    const line = lines.find((entry) => entry.msg === 'statements set aside');
    expect(line).toMatchObject({ tenantId: 'ten_a', submissionIds: ['tdb_A2'], reason: 'not_logged' });
    // Ids only: nothing of the statement or of the store's message.
    expect(JSON.stringify(line)).not.toMatch(/territorial|invalid key/);
  });

  it("sets aside the events of a tenant whose setting cannot be read, and submits another tenant's", async () => {
    const { store, recorded } = fakeStore(['ten_a', 'ten_b'], undefined, {
      configOf: (tenantId) => (tenantId === 'ten_a' ? new TypeError('unreadable setting') : undefined),
    });
    const { client, calls } = fakeClient(created());
    const { options: opts, counts } = observed(store, client);
    await new TdbSubmissions(opts).submit([flagged('A1', 'ten_a'), flagged('B1', 'ten_b')]);
    expect(calls.map((call) => call.puids)).toEqual([['B1']]);
    expect(recorded.map((doc) => doc._id)).toEqual(['tdb_B1']);
    expect(counts.get('set_aside:processing_failed')).toBe(1);
  });

  it('fails the whole batch, setting nothing aside, while the store is out of reach', async () => {
    const { store } = fakeStore(['ten_a', 'ten_b'], undefined, {
      record: (docs) => (docs[0]?.tenantId === 'ten_a' ? new MongoNetworkError('connection reset') : undefined),
    });
    const { client } = fakeClient(created());
    const { options: opts, counts } = observed(store, client);
    await expect(
      new TdbSubmissions(opts).submit([flagged('A1', 'ten_a'), flagged('B1', 'ten_b')]),
    ).rejects.toBeInstanceOf(MongoNetworkError);
    expect([...counts.keys()].filter((key) => key.startsWith('set_aside'))).toEqual([]);
  });

  it("records a retry's outcomes one by one when the store refuses one, without that one's answer", async () => {
    const { store, settled, finished } = fakeStore(['ten_a'], undefined, {
      outcomes: (outcomes) => (outcomes.some((entry) => entry.outcome.rejection) ? refusedByStore() : undefined),
    });
    const { client } = fakeClient(refusedCategory(0));
    const job: TdbRetryDoc = {
      _id: 'tdbr_a',
      tenantId: 'ten_a',
      submissionIds: ['tdb_A1', 'tdb_A2'],
      payloads: [{ puid: 'A1' }, { puid: 'A2' }] as TdbRetryDoc['payloads'],
      state: 'sending',
      attemptCount: 0,
      dueAt: new Date(),
      createdAt: new Date(),
      updatedAt: new Date(),
    };
    const { options: opts, counts } = observed(store, client);
    await new TdbSubmissions(opts).retry(job);
    // Written one by one after the refusal of the whole.
    expect(settled.map((write) => [...write.outcomes.keys()])).toEqual([['tdb_A1'], ['tdb_A2']]);
    expect(settled[0]!.outcomes.get('tdb_A1')).toEqual({ state: 'failed', error: 'rejected' });
    expect(settled[1]!.outcomes.get('tdb_A2')).toMatchObject({ state: 'pending', error: 'batch_refused' });
    expect(finished).toEqual([{ job: 'tdbr_a', pending: ['tdb_A2'] }]);
    expect(counts.get('set_aside:answer_not_logged')).toBe(1);
  });
});
