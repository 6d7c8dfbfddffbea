import { SecretBox, tdbTokenContext, type TdbConfigDoc, type TdbStatement } from '@vigil/proto';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { DueJobs } from '../queue/due-jobs';
import type { TdbCallResult, TdbClient } from './tdb-client';
import { TdbCalls } from './tdb-calls';

const box = new SecretBox([randomBytes(32)]);
const config: TdbConfigDoc = {
  _id: 'ten_a',
  sealed: box.seal('the-token', tdbTokenContext('ten_a')),
  hint: '…oken',
  baseUrl: 'https://tdb.example',
  territorialScope: ['DE'],
  defaults: { contentType: ['CONTENT_TYPE_TEXT'] },
  updatedAt: new Date(),
};

/** A client answering each call with the next of `answers`. */
function fakeClient(answers: TdbCallResult[]): TdbClient {
  return {
    submit: () => Promise.resolve(answers.shift()!),
    exists: () => Promise.resolve(false),
    close: () => Promise.resolve(),
  };
}

/** TdbCalls with this client, on the retry schedule 60 s then 120 s, as TdbSubmissions builds it. */
function calls(client: TdbClient): TdbCalls {
  const log = pino({ level: 'silent' });
  const schedule = new DueJobs({
    store: { claim: () => Promise.resolve([]), pruneLeases: () => Promise.resolve(0) },
    run: () => Promise.resolve(),
    log,
    pollMs: 1000,
    leaseMs: 1000,
    concurrency: 1,
    retryScheduleS: [60, 120],
  });
  return new TdbCalls({ client, secrets: box, log, schedule });
}

const items = (attemptCount: number) => [
  { id: 'tdb_A1', payload: { puid: 'A1' } as TdbStatement, attemptCount },
  { id: 'tdb_A2', payload: { puid: 'A2' } as TdbStatement, attemptCount },
];
const failed: TdbCallResult = { kind: 'failed', durationMs: 1, statusCode: 503, error: 'server_error' };
const created: TdbCallResult = { kind: 'created', durationMs: 1, statusCode: 201, uuids: new Map() };

describe('TdbCalls', () => {
  it('holds a tenant back after a failed call until its statements are due again, and lets it go once a call creates them', async () => {
    const tdb = calls(fakeClient([failed, created]));
    expect(tdb.heldBackUntil('ten_a')).toBeUndefined();
    const [first] = (await tdb.call(config, items(0))).outcomes;
    expect(tdb.heldBackUntil('ten_a')).toBeGreaterThan(Date.now());
    expect(first).toEqual({ outcome: { state: 'pending', dueAt: new Date(tdb.heldBackUntil('ten_a')!) } });
    expect(tdb.heldBackUntil('ten_b')).toBeUndefined();
    await tdb.call(config, items(1));
    expect(tdb.heldBackUntil('ten_a')).toBeUndefined();
  });

  it('does not hold a tenant back when the failed statements have spent their schedule', async () => {
    const tdb = calls(fakeClient([failed]));
    const result = await tdb.call(config, items(2));
    expect(result.outcomes.map((entry) => entry.outcome.state)).toEqual(['failed', 'failed']);
    expect(result.attempt).toMatchObject({ error: 'server_error', statusCode: 503, batchSize: 2 });
    expect(tdb.heldBackUntil('ten_a')).toBeUndefined();
  });

  it('counts an answer that cannot be processed as a failed call, and holds the tenant back', async () => {
    const tdb = calls({ ...fakeClient([]), submit: () => Promise.reject(new TypeError('answer not understood')) });
    const result = await tdb.call(config, items(0));
    expect(result.attempt).toMatchObject({ error: 'processing_failed', batchSize: 2 });
    expect(result.outcomes.map((entry) => entry.outcome.state)).toEqual(['pending', 'pending']);
    expect(tdb.heldBackUntil('ten_a')).toBeGreaterThan(Date.now());
  });
});
