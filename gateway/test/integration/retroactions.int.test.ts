import { COLLECTIONS, recordIdFor } from '@vigil/proto';
import { uniqueName, waitFor } from '../../../deploy/test-support';
import { apiCaller, errorOf, moderateWith, type Tenant } from './api-support';
import { startModeratorStack, type Gateway, type ModeratorStack } from './harness';

/**
 * Retroactions through the API (a promoted version applied from a backtest), run by the real moderator (built dist)
 * from the `backtests` topic on the gateway's database. Backtests judge at most 20 records a second and retroactions
 * apply at most 8, so that a job lasts long enough to be seen running, cancelled or interrupted.
 */
let stack: ModeratorStack;
let gw: Gateway;

beforeAll(async () => {
  stack = await startModeratorStack({
    name: 'gwra',
    moderatorEnv: { KAFKA_GROUP_ID: uniqueName('grp'), BACKTEST_RATE_PER_S: '20', RETROACTION_RATE_PER_S: '8' },
    gateway: {
      console: { backtests: { maxRunning: 1, maxPerHour: 100, maxRecords: 200, maxAiCalls: 20, ttlSeconds: 3600 } },
    },
  });
  ({ gw } = stack);
});
afterAll(async () => {
  await stack?.close();
});

type Data = Record<string, unknown> & { id: string; status: string };
const call = apiCaller(() => gw);
const words = (list: string[]) => ({
  rules: [{ id: 'animals', name: 'animals', strategies: [{ type: 'blocklist', words: list }] }],
});
const moderate = moderateWith(call);
const ended = (status: string) => ['succeeded', 'failed', 'cancelled'].includes(status);
/** Waits until `path` answers a job that satisfies `done`, and returns it. */
const until = (tenant: Tenant, path: string, done: (data: Data) => boolean, timeoutMs = 60_000) =>
  waitFor(
    async () => {
      const reply = await call(tenant, 'GET', path);
      expect(reply.status).toBe(200);
      const data = reply.body.data as Data;
      return done(data) ? data : undefined;
    },
    { timeoutMs },
  );
const statusOf = async (tenant: Tenant, clientId: string) =>
  (
    (await call(tenant, 'GET', `/records/${recordIdFor(tenant.tenantId, clientId)}`)).body.data as {
      moderationStatus: string;
    }
  ).moderationStatus;
/** The RecordModerated events a retroaction wrote (its id is their correlation id). */
const movedBy = async (tenantId: string, retroactionId: string) =>
  (await gw.db.collection(COLLECTIONS.events).find({ tenantId }).toArray()).filter(
    (event) => event.type === 'RecordModerated' && event.correlationId === retroactionId,
  ) as unknown as Array<{ stream: string; data: { recordId: string; status: string; ruleSetVersion?: number } }>;
const saveDraft = async (tenant: Tenant, list: string[]) => {
  const draft = await call(tenant, 'POST', '/rules/versions', words(list));
  expect(draft.status).toBe(201);
  return (draft.body.data as { version: number }).version;
};
const backtest = async (tenant: Tenant, version: number, limit = 100) => {
  const created = await call(tenant, 'POST', '/backtests', { version, limit });
  expect(created.status).toBe(202);
  return until(tenant, `/backtests/${(created.body.data as Data).id}`, (data) => ended(data.status));
};

/**
 * A tenant whose 60 otter records a fish rule left compliant, and the retroaction of a promoted otter version applied
 * from its backtest: the tenant, the version and the retroaction's id.
 */
async function otterRetroaction(): Promise<{ tenant: Tenant; draft: number; id: string }> {
  const tenant = await gw.newTenant();
  expect((await call(tenant, 'PUT', '/rules', words(['fish']))).status).toBe(200);
  for (let i = 0; i < 60; i += 1) await moderate(tenant, `r${i}`, 'an otter');
  const draft = await saveDraft(tenant, ['otter']);
  const bt = await backtest(tenant, draft);
  expect((await call(tenant, 'POST', `/rules/versions/${draft}/promote`)).status).toBe(200);
  const applied = await call(tenant, 'POST', `/backtests/${bt.id}/apply`);
  expect(applied.status).toBe(202);
  return { tenant, draft, id: (applied.body.data as Data).id };
}

describe('retroactions', () => {
  it('applies a promoted version to exactly the records its backtest predicted, under that version', async () => {
    const tenant = await gw.newTenant();
    expect((await call(tenant, 'PUT', '/rules', words(['otter']))).status).toBe(200);
    await moderate(tenant, 'o1', 'an otter swims');
    await moderate(tenant, 'o2', 'another otter');
    await moderate(tenant, 'h1', 'a heron stands');
    await moderate(tenant, 'h2', 'herons and otters');
    await moderate(tenant, 'p1', 'plain words');
    await moderate(tenant, 'm1', 'a heron by hand');
    await moderate(tenant, 'pt', 'a heron in passthrough', { passthrough: true });
    // A human decided m1: it stays as they decided.
    const manual = await call(tenant, 'POST', `/records/${recordIdFor(tenant.tenantId, 'm1')}/moderations`, {
      status: 'Compliant',
      reason: 'fine',
    });
    expect(manual.status).toBe(200);
    const draft = await saveDraft(tenant, ['heron']);
    const bt = await backtest(tenant, draft);
    expect(bt.status).toBe('succeeded');
    const predicted = (bt.result as { changes: Record<string, unknown> }).changes as {
      toFlagged: number;
      toCompliant: number;
      toFlaggedExamples: Array<{ recordId: string }>;
      toCompliantExamples: Array<{ recordId: string }>;
    };
    expect(predicted).toMatchObject({ toFlagged: 1, toCompliant: 2, heldByHumans: 1 });

    // Not promoted yet: refused, and nothing is written.
    expect(errorOf(await call(tenant, 'POST', `/backtests/${bt.id}/apply`))).toEqual([409, 'version_not_live']);
    expect((await call(tenant, 'POST', `/rules/versions/${draft}/promote`)).status).toBe(200);

    const before: Record<string, string> = {};
    for (const clientId of ['o1', 'o2', 'h1', 'h2', 'p1', 'm1']) before[clientId] = await statusOf(tenant, clientId);
    const applied = await call(tenant, 'POST', `/backtests/${bt.id}/apply`);
    expect(applied.status).toBe(202);
    const job = applied.body.data as Data;
    // The answer shows the effect confirmed: the backtest's prediction.
    expect(job).toMatchObject({
      backtestId: bt.id,
      version: draft,
      status: 'queued',
      predicted: { changes: predicted },
    });
    const done = await until(tenant, `/retroactions/${job.id}`, (data) => ended(data.status));
    expect(done).toMatchObject({
      status: 'succeeded',
      progress: { selected: 7, processed: 7 },
      counts: { toFlagged: 1, toCompliant: 2, unchanged: 2, heldByHumans: 1, skipped: 1 },
    });

    // Exactly the records predicted changed, each way, and each moderation carries the version that made it.
    const changed: string[] = [];
    for (const clientId of Object.keys(before))
      if ((await statusOf(tenant, clientId)) !== before[clientId]) changed.push(recordIdFor(tenant.tenantId, clientId));
    const predictedIds = [...predicted.toFlaggedExamples, ...predicted.toCompliantExamples].map((e) => e.recordId);
    expect(changed.sort()).toEqual(predictedIds.sort());
    const events = await movedBy(tenant.tenantId, job.id);
    expect(events.map((event) => event.data.recordId).sort()).toEqual(predictedIds.sort());
    expect(events.every((event) => event.data.ruleSetVersion === draft)).toBe(true);
    expect(await statusOf(tenant, 'h1')).toBe('Flagged');
    expect(await statusOf(tenant, 'm1')).toBe('Compliant');

    const list = await call(tenant, 'GET', '/retroactions');
    expect((list.body.data as Data[]).map((item) => item.id)).toEqual([job.id]);
    // The old bulk re-run still answers.
    const rerun = await call(tenant, 'POST', '/records/moderations/rerun', { limit: 2 });
    expect(rerun.status).toBe(202);
  }, 120_000);

  it('refuses with stable codes: unknown, unfinished, expired backtests, another tenant’s', async () => {
    const tenant = await gw.newTenant();
    for (let i = 0; i < 30; i += 1) await moderate(tenant, `r${i}`, 'an otter');
    expect(errorOf(await call(tenant, 'POST', '/backtests/bt_unknown/apply'))).toEqual([404, 'not_found']);
    const created = await call(tenant, 'POST', '/backtests', { version: 0, limit: 30 });
    expect(created.status).toBe(202);
    const id = (created.body.data as Data).id;
    // Still queued or running (30 records at 20 a second).
    expect(errorOf(await call(tenant, 'POST', `/backtests/${id}/apply`))).toEqual([409, 'backtest_not_finished']);
    await until(tenant, `/backtests/${id}`, (data) => ended(data.status));
    const other = await gw.newTenant();
    expect(errorOf(await call(other, 'POST', `/backtests/${id}/apply`))).toEqual([404, 'not_found']);
    expect(errorOf(await call(tenant, 'GET', '/retroactions/ra_unknown'))).toEqual([404, 'not_found']);
    await gw.db
      .collection(COLLECTIONS.backtests)
      .updateOne({ _id: id as never }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    expect(errorOf(await call(tenant, 'POST', `/backtests/${id}/apply`))).toEqual([410, 'backtest_expired']);
  }, 90_000);

  it('runs one retroaction per tenant at once, and a cancel stops it after its batch', async () => {
    const tenant = await gw.newTenant();
    expect((await call(tenant, 'PUT', '/rules', words(['fish']))).status).toBe(200);
    for (let i = 0; i < 60; i += 1) await moderate(tenant, `r${String(i).padStart(2, '0')}`, 'an otter');
    const draft = await saveDraft(tenant, ['otter']);
    const bt = await backtest(tenant, draft);
    expect(bt.result).toMatchObject({ changes: { toFlagged: 60 } });
    expect((await call(tenant, 'POST', `/rules/versions/${draft}/promote`)).status).toBe(200);

    const applied = await call(tenant, 'POST', `/backtests/${bt.id}/apply`);
    expect(applied.status).toBe(202);
    const id = (applied.body.data as Data).id;
    expect(errorOf(await call(tenant, 'POST', `/backtests/${bt.id}/apply`))).toEqual([409, 'retroaction_running']);
    await until(tenant, `/retroactions/${id}`, (data) => (data.progress as { processed: number }).processed > 0);
    expect((await call(tenant, 'POST', `/retroactions/${id}/cancel`)).status).toBe(202);
    const cancelled = await until(tenant, `/retroactions/${id}`, (data) => ended(data.status));
    expect(cancelled.status).toBe('cancelled');
    const { processed } = cancelled.progress as { processed: number };
    expect(processed).toBeLessThan(60);
    // What it went through is applied, nothing after it.
    const events = await movedBy(tenant.tenantId, id);
    expect(events).toHaveLength(processed);
    expect((cancelled.counts as { toFlagged: number }).toFlagged).toBe(processed);
    expect(await statusOf(tenant, 'r59')).toBe('Compliant');

    // Its slot is free again.
    const again = await call(tenant, 'POST', `/backtests/${bt.id}/apply`);
    expect(again.status).toBe(202);
    const rest = await until(tenant, `/retroactions/${(again.body.data as Data).id}`, (data) => ended(data.status));
    expect(rest).toMatchObject({ status: 'succeeded', counts: { toFlagged: 60 - processed, unchanged: processed } });
  }, 150_000);

  it('stops as failed (version_replaced) when another version goes live while it runs', async () => {
    const { tenant, draft, id } = await otterRetroaction();
    await until(tenant, `/retroactions/${id}`, (data) => (data.progress as { processed: number }).processed > 0);
    expect((await call(tenant, 'PUT', '/rules', words(['fish']))).status).toBe(200);
    const failed = await until(tenant, `/retroactions/${id}`, (data) => ended(data.status));
    expect(failed).toMatchObject({ status: 'failed', error: 'version_replaced' });
    const { processed } = failed.progress as { processed: number };
    expect(processed).toBeLessThan(60);
    // Every moderation it wrote is under the version it applied, none after the change.
    const events = await movedBy(tenant.tenantId, id);
    expect(events.length).toBe((failed.counts as { toFlagged: number }).toFlagged);
    expect(events.every((event) => event.data.ruleSetVersion === draft)).toBe(true);
    expect(await statusOf(tenant, 'r59')).toBe('Compliant');
  }, 150_000);

  it('resumes after its moderator is killed mid-job, writing no record twice', async () => {
    const { tenant, id } = await otterRetroaction();
    await until(tenant, `/retroactions/${id}`, (data) => (data.progress as { processed: number }).processed >= 20);
    await stack.replaceModerator('SIGKILL');
    const done = await until(tenant, `/retroactions/${id}`, (data) => ended(data.status), 120_000);
    expect(done).toMatchObject({ status: 'succeeded', progress: { processed: 60 }, counts: { toFlagged: 60 } });
    const run = await gw.db.collection(COLLECTIONS.retroactionRuns).findOne({ _id: id as never });
    expect(run?.attempts).toBe(2);
    // Once per record: the batch in flight at the kill was gone through again without a second write.
    const events = await movedBy(tenant.tenantId, id);
    expect(events).toHaveLength(60);
    expect(new Set(events.map((event) => event.data.recordId)).size).toBe(60);
  }, 200_000);
});
