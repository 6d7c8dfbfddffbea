import { recordIdFor } from '@vigil/proto';
import { adminPortOf, waitFor } from '../../../deploy/test-support';
import { apiCaller, errorOf } from './api-support';
import { startModeratorStack, type Gateway, type ModeratorStack } from './harness';

// A whole rule set version run in shadow beside the live one, against the real stack: the gateway in process, the
// moderator as a process, Kafka and the MongoDB-wire store. Nothing sleeps.
const WAIT = 30_000;
let stack: ModeratorStack;
let gw: Gateway;

beforeAll(async () => {
  stack = await startModeratorStack({ name: 'gwsv' });
  ({ gw } = stack);
});
afterAll(async () => {
  await stack?.close();
});

const call = apiCaller(() => gw);
const rule = (id: string, words: string[]) => ({ id, name: id, strategies: [{ type: 'blocklist', words }] });
type ShadowRow = { ruleId: string; ruleSetVersion: number } & Record<string, number>;

describe('shadow versions', () => {
  it('runs a draft beside the live set without acting, and counts agreement with live results and people', async () => {
    const tenant = await gw.newTenant();
    const live = await call(tenant, 'PUT', '/rules', { rules: [rule('animals', ['otter'])] });
    expect(live.status).toBe(200);
    const liveVersion = (live.body as { version: number }).version;
    const saved = await call(tenant, 'POST', '/rules/versions', {
      rules: [rule('animals', ['otter']), rule('birds', ['heron'])],
    });
    expect(saved.status).toBe(201);
    const draft = (saved.body.data as { version: number }).version;

    // Refusals: unknown version, the live one, a malformed body.
    expect(errorOf(await call(tenant, 'PUT', '/rules/shadow', { version: 999 }))).toEqual([
      422,
      'unknown_rule_version',
    ]);
    expect(errorOf(await call(tenant, 'PUT', '/rules/shadow', { version: liveVersion }))).toEqual([409, 'conflict']);
    expect(errorOf(await call(tenant, 'PUT', '/rules/shadow', { version: 0 }))).toEqual([400, 'validation_error']);

    expect((await call(tenant, 'GET', '/rules/shadow')).body).toEqual({ data: { version: null } });
    const set = await call(tenant, 'PUT', '/rules/shadow', { version: draft });
    expect(set.status).toBe(200);
    expect((await call(tenant, 'GET', '/rules/shadow')).body).toEqual({ data: { version: draft } });

    const rows = async () =>
      ((await call(tenant, 'GET', `/rules/precision?version=${draft}`)).body as { shadow: ShadowRow[] }).shadow;
    const row = async (ruleId: string) => (await rows()).find((r) => r.ruleId === ruleId);
    // Shadow work is bounded per tenant (one at a time): each record's judgement is awaited before the next.
    const cases: Array<[string, string, string]> = [
      ['s1', 'an otter swims', 'Flagged'],
      ['s2', 'a heron stands', 'Compliant'],
      ['s3', 'a calm day', 'Compliant'],
    ];
    for (const [index, [clientId, text, status]] of cases.entries()) {
      const reply = await call(tenant, 'POST', '/moderate', { clientId, name: 'n', entity: 'post', content: text });
      // The live set alone judges: the draft's heron rule acts on nothing.
      expect(reply.body).toMatchObject({ status, rules: status === 'Flagged' ? ['animals'] : [] });
      await waitFor(async () => (await row('birds'))?.runs === index + 1, {
        timeoutMs: WAIT,
        what: `run ${index + 1}`,
      });
    }
    expect(await row('animals')).toMatchObject({
      ruleSetVersion: draft,
      runs: 3,
      wouldFlag: 1,
      agreeLive: 3,
      disagreeLive: 0,
    });
    expect(await row('birds')).toMatchObject({ runs: 3, wouldFlag: 1, agreeLive: 1, disagreeLive: 2 });

    // A person flags the heron record: the draft's birds rule agreed with them, its animals rule did not.
    const decided = await call(tenant, 'POST', `/records/${recordIdFor(tenant.tenantId, 's2')}/moderations`, {
      status: 'Flagged',
      reason: 'herons are off topic here',
    });
    expect(decided.status).toBeLessThan(300);
    await waitFor(async () => (await row('birds'))?.agreeHuman === 1, { timeoutMs: WAIT, what: 'human count' });
    expect(await row('animals')).toMatchObject({ agreeHuman: 0, disagreeHuman: 1 });
    expect((await call(tenant, 'GET', `/records/${recordIdFor(tenant.tenantId, 's2')}`)).body.data).toMatchObject({
      moderationStatus: 'Flagged',
    });

    const metrics = await fetch(`http://127.0.0.1:${await adminPortOf(stack.moderator)}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^moderator_shadow_version_rule_verdicts_total\{live="agree"\} [1-9]/m);
    expect(metrics).toMatch(/^moderator_shadow_version_rule_verdicts_total\{live="disagree"\} [1-9]/m);

    // Promoting the draft ends its shadow; a later live change keeps another shadow version.
    expect((await call(tenant, 'POST', `/rules/versions/${draft}/promote`)).status).toBe(200);
    expect((await call(tenant, 'GET', '/rules/shadow')).body).toEqual({ data: { version: null } });
    expect((await call(tenant, 'PUT', '/rules/shadow', { version: liveVersion })).status).toBe(200);
    expect((await call(tenant, 'PUT', '/rules', { rules: [rule('animals', ['otter', 'heron'])] })).status).toBe(200);
    expect((await call(tenant, 'GET', '/rules/shadow')).body).toEqual({ data: { version: liveVersion } });
    expect((await call(tenant, 'PUT', '/rules/shadow', { version: null })).body).toEqual({ data: { version: null } });
  }, 120_000);
});
