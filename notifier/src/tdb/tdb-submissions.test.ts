import { SecretBox, tdbTokenContext, type DomainEvent, type TdbConfigDoc, type TdbSubmissionDoc } from '@vigil/proto';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import type { TdbStore } from '../store/tdb-store';
import type { TdbCallResult, TdbClient } from './tdb-client';
import { batchesOf, TdbSubmissions } from './tdb-submissions';

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

/** An in-memory TdbStore: tenants with submission on, inserted documents, finished outcomes. */
function fakeStore(on: string[]) {
  const inserted: TdbSubmissionDoc[] = [];
  const finished = new Map<string, { next: { state: string } & Record<string, unknown>; error?: string }>();
  const store = {
    configOf: (tenantId: string) => Promise.resolve(on.includes(tenantId) ? config(tenantId) : null),
    insertNew: (docs: TdbSubmissionDoc[]) => {
      inserted.push(...docs);
      return Promise.resolve(docs.length);
    },
    finish: (doc: TdbSubmissionDoc, attempt: { error?: string } | undefined, next: { state: string }) => {
      finished.set(doc._id, { next, ...(attempt?.error ? { error: attempt.error } : {}) });
      return Promise.resolve();
    },
    claim: () => Promise.resolve([]),
    pruneLeases: () => Promise.resolve(0),
  };
  return { store: store as unknown as TdbStore, inserted, finished };
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

const submissions = (store: TdbStore, events: DomainEvent[], client: TdbClient) =>
  new TdbSubmissions(options(store, client)).plan(events);

const options = (store: TdbStore, client: TdbClient) => ({
  store,
  client,
  secrets: box,
  log: pino({ level: 'silent' }),
  retryScheduleS: [1, 2],
  pollMs: 1000,
  leaseMs: 1000,
  concurrency: 1,
  batchWaitMs: 0,
});

describe('TdbSubmissions.plan', () => {
  it('plans restrictions of tenants with submission on, and nothing for test mode, lifts or other tenants', async () => {
    const { store, inserted } = fakeStore(['ten_on']);
    const { client } = fakeClient({ kind: 'created', durationMs: 1, statusCode: 201, uuids: new Map() });
    await submissions(
      store,
      [
        flagged('E1'),
        flagged('E2', 'ten_off'),
        flagged('E3', 'ten_on', { testMode: true }),
        flagged('E4', 'ten_on', { status: 'Compliant', previousStatus: 'Flagged' }),
      ],
      client,
    );
    expect(inserted.map((doc) => doc._id)).toEqual(['tdb_E1']);
    expect(inserted[0]).toMatchObject({ state: 'pending', payload: { puid: 'E1', territorial_scope: ['DE'] } });
  });
});

describe('TdbSubmissions.submitBatch', () => {
  const docs = async () => {
    const { store, inserted } = fakeStore(['ten_on']);
    const { client } = fakeClient({ kind: 'created', durationMs: 1, statusCode: 201, uuids: new Map() });
    await submissions(store, [flagged('E1'), flagged('E2'), flagged('E3')], client);
    return inserted.map((doc) => ({ ...doc, attemptCount: 0 }));
  };

  it('sends one call with the opened token and records the database ids', async () => {
    const batch = batchesOf(await docs());
    expect(batch).toHaveLength(1);
    const { store, finished } = fakeStore(['ten_on']);
    const { client, calls } = fakeClient({
      kind: 'created',
      durationMs: 1,
      statusCode: 201,
      uuids: new Map([['E2', 'uuid-2']]),
    });
    await new TdbSubmissions(options(store, client)).submitBatch(batch[0]!);
    expect(calls).toEqual([{ token: 'the-token', puids: ['E1', 'E2', 'E3'] }]);
    expect(finished.get('tdb_E2')?.next).toEqual({ state: 'submitted', tdbUuid: 'uuid-2' });
    expect(finished.get('tdb_E1')?.next).toEqual({ state: 'submitted' });
  });

  it('on a refusal: a stored puid counts as submitted, another refusal fails, the rest go again', async () => {
    const [batch] = batchesOf(await docs());
    const { store, finished } = fakeStore(['ten_on']);
    const errors = new Map<number, Record<string, string[]>>([
      [0, { puid: ['The identifier given is not unique within this platform.'] }],
      [2, { category: ['The selected category is invalid.'] }],
    ]);
    const { client } = fakeClient({ kind: 'refused', durationMs: 1, statusCode: 422, errors }, ['E1']);
    await new TdbSubmissions(options(store, client)).submitBatch(batch!);
    expect(finished.get('tdb_E1')).toEqual({ next: { state: 'submitted', alreadyStored: true }, error: 'duplicate' });
    expect(finished.get('tdb_E3')).toEqual({
      next: { state: 'failed', rejection: { category: ['The selected category is invalid.'] } },
      error: 'rejected',
    });
    expect(finished.get('tdb_E2')).toMatchObject({ next: { state: 'pending' }, error: 'batch_refused' });
  });

  it('reschedules every statement after a failed call, and fails them once the schedule is spent', async () => {
    const all = await docs();
    const { store, finished } = fakeStore(['ten_on']);
    const { client } = fakeClient({ kind: 'failed', durationMs: 1, statusCode: 503, error: 'server_error' });
    const sender = new TdbSubmissions(options(store, client));
    await sender.submitBatch(batchesOf(all)[0]!);
    expect([...finished.values()].map((f) => f.next.state)).toEqual(['pending', 'pending', 'pending']);
    await sender.submitBatch(batchesOf(all.map((doc) => ({ ...doc, attemptCount: 2 })))[0]!);
    expect([...finished.values()].map((f) => f.next.state)).toEqual(['failed', 'failed', 'failed']);
  });

  it('skips what a tenant that turned submission off still had queued', async () => {
    const [batch] = batchesOf(await docs());
    const { store, finished } = fakeStore([]);
    const { client, calls } = fakeClient({ kind: 'created', durationMs: 1, statusCode: 201, uuids: new Map() });
    await new TdbSubmissions(options(store, client)).submitBatch(batch!);
    expect(calls).toEqual([]);
    expect(finished.get('tdb_E1')?.next).toEqual({ state: 'skipped', reason: 'disabled' });
  });

  it('groups claimed statements by tenant', () => {
    const doc = (id: string, tenantId: string) => ({ _id: id, tenantId }) as TdbSubmissionDoc;
    const batches = batchesOf([doc('a', 't1'), doc('b', 't2'), doc('c', 't1')]);
    expect(batches.map((b) => [b.tenantId, b.docs.map((d) => d._id)])).toEqual([
      ['t1', ['a', 'c']],
      ['t2', ['b']],
    ]);
  });
});
