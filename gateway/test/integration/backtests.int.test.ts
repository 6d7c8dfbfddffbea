import { COLLECTIONS, recordIdFor, userIdFor } from '@vigil/proto';
import { grpcAddressOf, uniqueName, waitFor } from '../../../deploy/test-support';
import { apiCaller, errorOf, moderateWith, type Tenant } from './api-support';
import { startGateway, startModeratorStack, type Gateway, type ModeratorStack } from './harness';

/**
 * Backtests through the API, run by the real moderator (built dist) from the `backtests` topic, on the gateway's
 * database. The moderator judges at most 4 records a second, so that a job lasts long enough to be seen running.
 */
let stack: ModeratorStack;
let gw: Gateway;

beforeAll(async () => {
  stack = await startModeratorStack({
    name: 'gwbt',
    moderatorEnv: { KAFKA_GROUP_ID: uniqueName('grp'), BACKTEST_RATE_PER_S: '4' },
    gateway: {
      console: { backtests: { maxRunning: 1, maxPerHour: 100, maxRecords: 50, maxAiCalls: 20, ttlSeconds: 3600 } },
    },
  });
  ({ gw } = stack);
});
afterAll(async () => {
  await stack?.close();
});

const call = apiCaller(() => gw);
const words = (id: string, list: string[]) => ({
  rules: [{ id, name: id, strategies: [{ type: 'blocklist', words: list }] }],
});
const moderate = moderateWith(call);
/** Waits for a job to reach a status that ends it, and returns it. */
const settled = async (tenant: Tenant, id: string, timeoutMs = 60_000) =>
  waitFor(
    async () => {
      const reply = await call(tenant, 'GET', `/backtests/${id}`);
      expect(reply.status).toBe(200);
      const data = reply.body.data as { status: string };
      return ['succeeded', 'failed', 'cancelled'].includes(data.status) ? reply.body.data : undefined;
    },
    { timeoutMs },
  );
const eventsOf = (tenantId: string) => gw.db.collection(COLLECTIONS.events).countDocuments({ tenantId });

/** A tenant with a live rule (otter) and a draft that adds heron, and records judged by the live one. */
async function seeded(): Promise<Tenant & { draft: number; user: string }> {
  const tenant = await gw.newTenant();
  expect((await call(tenant, 'PATCH', '/settings', { suspensionThreshold: 3 })).status).toBe(200);
  expect((await call(tenant, 'PUT', '/rules', words('animals', ['otter']))).status).toBe(200);
  const draft = await call(tenant, 'POST', '/rules/versions', words('animals', ['otter', 'heron']));
  expect(draft.status).toBe(201);
  const user = { clientId: 'u1', email: 'u1@example.com' };
  await moderate(tenant, 'o1', 'an otter swims', { user });
  await moderate(tenant, 'o2', 'another otter', { user });
  await moderate(tenant, 'h1', 'a heron stands', { user });
  await moderate(tenant, 'p1', 'plain words');
  await moderate(tenant, 'pt', 'a heron in passthrough', { passthrough: true });
  // A human flagged a record no rule flags: the candidate disagrees with them.
  const manual = await call(tenant, 'POST', `/records/${recordIdFor(tenant.tenantId, 'p1')}/moderations`, {
    status: 'Flagged',
    reason: 'off topic',
  });
  expect(manual.status).toBe(200);
  return {
    ...tenant,
    draft: (draft.body as { data: { version: number } }).data.version,
    user: userIdFor(tenant.tenantId, 'u1'),
  };
}

describe('backtests', () => {
  it('runs a draft over stored records and reports what would change, acting on nothing', async () => {
    const tenant = await seeded();
    const events = await eventsOf(tenant.tenantId);

    const created = await call(tenant, 'POST', '/backtests', { version: tenant.draft, limit: 10 });
    expect(created.status).toBe(202);
    expect(created.body.data).toMatchObject({ version: tenant.draft, status: 'queued', result: null });
    const job = await settled(tenant, created.body.data.id as string);

    expect(job).toMatchObject({ status: 'succeeded', progress: { selected: 5, processed: 5 } });
    const heron = recordIdFor(tenant.tenantId, 'h1');
    expect(job.result).toMatchObject({
      judged: 4,
      skipped: { passthrough: 1, gone: 0 },
      truncated: false,
      changes: {
        toFlagged: 1,
        toCompliant: 0,
        heldByHumans: 1,
        toFlaggedExamples: [{ recordId: heron, reasons: [expect.stringContaining('heron')] }],
      },
      rules: [{ ruleId: 'animals', flags: 3, humanConfirmed: 0, humanOverturned: 0 }],
      users: { threshold: 3, wouldSuspend: [tenant.user], wouldReinstate: [], truncated: false },
      humans: { reviewed: 1, agree: 0, disagree: 1 },
      ai: { enabled: false, calls: 0, recordsWithoutAi: 0 },
    });

    // Nothing acted: no event (so no webhook, email or payment action), the record and user as they were.
    expect(await eventsOf(tenant.tenantId)).toBe(events);
    expect((await call(tenant, 'GET', `/records/${heron}`)).body.data).toMatchObject({ moderationStatus: 'Compliant' });
    expect((await call(tenant, 'GET', `/users/${tenant.user}`)).body.data).toMatchObject({ actionStatus: null });

    // The selection takes GET /records' filters and a bound; the live version (or 0, the default set) runs too.
    const flaggedOnly = await call(tenant, 'POST', '/backtests', { version: 0, status: 'Flagged', limit: 1 });
    expect(flaggedOnly.status).toBe(202);
    const narrow = await settled(tenant, flaggedOnly.body.data.id as string);
    expect(narrow.result).toMatchObject({ judged: 1, truncated: true });

    const list = await call(tenant, 'GET', '/backtests');
    expect(list.status).toBe(200);
    expect((list.body.data as { id: string }[]).map((item) => item.id)).toEqual([narrow.id, job.id]);
  });

  it('refuses with stable codes: unknown version, invalid rule set, too large, out of bounds', async () => {
    const tenant = await gw.newTenant();
    expect(errorOf(await call(tenant, 'POST', '/backtests', { version: 42 }))).toEqual([422, 'unknown_rule_version']);
    expect(errorOf(await call(tenant, 'POST', '/backtests', { version: 0, limit: 51 }))).toEqual([
      422,
      'backtest_too_large',
    ]);
    expect(
      errorOf(await call(tenant, 'POST', '/backtests', { version: 0, ai: { enabled: true, maxCalls: 21 } })),
    ).toEqual([422, 'backtest_too_large']);
    // Past any deployment's bound too: the same answer, naming this deployment's bound, as docs/limits.md says.
    for (const body of [
      { version: 0, limit: 100_001 },
      { version: 0, limit: 5_000_000 },
      { version: 0, ai: { enabled: true, maxCalls: 10_001 } },
    ]) {
      const reply = await call(tenant, 'POST', '/backtests', body);
      expect([reply.status, reply.body.error?.code, reply.body.error?.details]).toEqual([
        422,
        'backtest_too_large',
        { limit: 'limit' in body ? 50 : 20 },
      ]);
    }
    expect(errorOf(await call(tenant, 'POST', '/backtests', { version: 0, limit: 0 }))).toEqual([
      400,
      'validation_error',
    ]);
    expect(errorOf(await call(tenant, 'POST', '/backtests', { version: 0, createdAfter: 'yesterday' }))).toEqual([
      400,
      'validation_error',
    ]);
    // A version stored before today's checks (two rules with one id) is not run.
    await gw.db.collection(COLLECTIONS.ruleVersions).insertOne({
      _id: `${tenant.tenantId}#7` as never,
      tenantId: tenant.tenantId,
      version: 7,
      rules: [words('a', ['x']).rules[0], words('a', ['y']).rules[0]],
      kind: 'draft',
      author: 'api_key:test',
      createdAt: new Date(),
    });
    expect(errorOf(await call(tenant, 'POST', '/backtests', { version: 7 }))).toEqual([422, 'invalid_rule_set']);
    // Another tenant's job is not found.
    const other = await gw.newTenant();
    const mine = await call(tenant, 'POST', '/backtests', { version: 0 });
    expect(mine.status).toBe(202);
    expect(errorOf(await call(other, 'GET', `/backtests/${mine.body.data.id}`))).toEqual([404, 'not_found']);
    await settled(tenant, mine.body.data.id as string);
  });

  it('runs at most one backtest per tenant at once, and a cancelled one frees its place', async () => {
    const tenant = await seeded();
    const first = await call(tenant, 'POST', '/backtests', { version: tenant.draft });
    expect(first.status).toBe(202);
    expect(errorOf(await call(tenant, 'POST', '/backtests', { version: tenant.draft }))).toEqual([
      409,
      'backtest_running',
    ]);
    // Another tenant is not held back.
    const other = await gw.newTenant();
    const theirs = await call(other, 'POST', '/backtests', { version: 0 });
    expect(theirs.status).toBe(202);

    const cancel = await call(tenant, 'POST', `/backtests/${first.body.data.id}/cancel`);
    expect(cancel.status).toBe(202);
    const cancelled = await settled(tenant, first.body.data.id as string);
    expect(cancelled).toMatchObject({ status: 'cancelled', result: null });

    const second = await call(tenant, 'POST', '/backtests', { version: tenant.draft });
    expect(second.status).toBe(202);
    expect(await settled(tenant, second.body.data.id as string)).toMatchObject({ status: 'succeeded' });
    await settled(other, theirs.body.data.id as string);
  });

  it('bounds how often a tenant creates backtests: past BACKTEST_MAX_PER_HOUR, 429 rate_limited with Retry-After', async () => {
    const paced = await startGateway({
      moderatorAddress: await grpcAddressOf(stack.moderator),
      ...stack.names,
      console: { backtests: { maxRunning: 1, maxPerHour: 2, maxRecords: 50, maxAiCalls: 20, ttlSeconds: 3600 } },
    });
    try {
      const tenant = await paced.newTenant();
      const post = () => paced.request('POST', '/api/v1/backtests', { key: tenant.key, body: { version: 0 } });
      // Create and cancel, twice: the one-running bound never holds it back, the hour's bound does.
      for (let i = 0; i < 2; i += 1) {
        const created = await post();
        expect(created.status).toBe(202);
        const id = created.body.data.id as string;
        await paced.request('POST', `/api/v1/backtests/${id}/cancel`, { key: tenant.key });
        await waitFor(async () => {
          const read = await paced.request('GET', `/api/v1/backtests/${id}`, { key: tenant.key });
          return ['succeeded', 'cancelled'].includes(read.body.data.status as string) ? true : undefined;
        });
      }
      const refused = await post();
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: 'rate_limited', details: { limit: 2, windowSeconds: 3600 } });
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(3960);
      // Nothing was kept of it, and another tenant has its own hour.
      const listed = await paced.request('GET', '/api/v1/backtests', { key: tenant.key });
      expect(listed.body.data).toHaveLength(2);
      const other = await paced.newTenant();
      const theirs = await paced.request('POST', '/api/v1/backtests', { key: other.key, body: { version: 0 } });
      expect(theirs.status).toBe(202);
      await waitFor(async () => {
        const read = await paced.request('GET', `/api/v1/backtests/${theirs.body.data.id}`, { key: other.key });
        return read.body.data.status === 'succeeded' ? true : undefined;
      });
    } finally {
      await paced.close();
    }
  });

  it('survives its runner being killed mid-job: the next moderator of the group runs it again to the end', async () => {
    const tenant = await gw.newTenant();
    for (let i = 0; i < 16; i += 1) await moderate(tenant, `r${i}`, i % 2 ? 'an otter' : 'a fish');
    const created = await call(tenant, 'POST', '/backtests', { version: 0, limit: 16 });
    expect(created.status).toBe(202);
    const id = created.body.data.id as string;
    await waitFor(
      async () => ((await call(tenant, 'GET', `/backtests/${id}`)).body.data.status === 'running' ? true : undefined),
      { timeoutMs: 30_000 },
    );
    await stack.replaceModerator('SIGKILL');
    const job = await settled(tenant, id, 90_000);
    expect(job).toMatchObject({ status: 'succeeded', result: { judged: 16 } });
    const run = await gw.db.collection(COLLECTIONS.backtestRuns).findOne({ _id: id as never });
    expect(run?.attempts).toBe(2);
  }, 150_000);
});
