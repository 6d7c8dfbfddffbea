import {
  SecretBox,
  tdbTokenContext,
  type DomainEvent,
  type TdbConfigDoc,
  type TdbRetryDoc,
  type TdbSubmissionDoc,
} from '@vigil/proto';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import type { TdbStore } from '../store/tdb-store';
import type { TdbCallResult, TdbClient } from './tdb-client';
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

/** An in-memory TdbStore: tenants with submission on, recorded log documents, retries queued and settled. */
function fakeStore(on: string[], enabledAt = new Date('2026-01-01T00:00:00Z')) {
  const recorded: TdbSubmissionDoc[] = [];
  const retries: TdbRetryDoc[] = [];
  const settled: Array<{
    job: string;
    error?: string;
    outcomes: Map<string, { state: string } & Record<string, unknown>>;
  }> = [];
  const store = {
    configOf: (tenantId: string) => Promise.resolve(on.includes(tenantId) ? { ...config(tenantId), enabledAt } : null),
    record: (docs: TdbSubmissionDoc[]) => {
      recorded.push(...docs);
      return Promise.resolve(new Set(docs.map((doc) => doc._id)));
    },
    queueRetry: (job: TdbRetryDoc) => {
      retries.push(job);
      return Promise.resolve();
    },
    settleRetry: (
      job: TdbRetryDoc,
      attempt: { error?: string } | undefined,
      outcomes: Array<{ id: string; outcome: { state: string }; error?: string }>,
    ) => {
      settled.push({
        job: job._id,
        ...(attempt?.error ? { error: attempt.error } : {}),
        outcomes: new Map(outcomes.map(({ id, outcome, error }) => [id, { ...outcome, ...(error ? { error } : {}) }])),
      });
      return Promise.resolve();
    },
    claim: () => Promise.resolve([]),
    pruneLeases: () => Promise.resolve(0),
  };
  return { store: store as unknown as TdbStore, recorded, retries, settled };
}

function fakeClient(result: TdbCallResult, stored: string[] = []) {
  const calls: Array<{ token: string; puids: string[] }> = [];
  const client: TdbClient = {
    submit: ({ token, statements }) => {
      calls.push({ token, puids: statements.map((s) => s.puid) });
      return Promise.resolve(result);
    },
    exists: ({ puid }) => Promise.resolve(stored.includes(puid)),
    close: () => Promise.resolve(),
  };
  return { client, calls };
}

const flagged = (id: string, tenantId = 'ten_on', extra: Record<string, unknown> = {}): DomainEvent => ({
  id,
  tenantId,
  stream: 'record-rec_1',
  version: 2,
  occurredAt: '2026-03-01T10:00:00.000Z',
  correlationId: 'c',
  type: 'RecordModerated',
  data: {
    recordId: 'rec_1',
    moderationId: 'mod_1',
    status: 'Flagged',
    previousStatus: 'Compliant',
    via: 'AI',
    reasons: [],
    rules: [],
    testMode: false,
    ...extra,
  },
});

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

const created = (uuids: Array<[string, string]> = []): TdbCallResult => ({
  kind: 'created',
  durationMs: 1,
  statusCode: 201,
  uuids: new Map(uuids),
});

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
