import { recordIdFor, userIdFor } from '@vigil/proto';
import { Webhook } from 'standardwebhooks';
import type { Receiver } from '../../../deploy/e2e/support';
import { adminPortOf, waitFor } from '../../../deploy/test-support';
import { startServiceStack, type Gateway, type ServiceStack } from './harness';

// Each rule's precision from human decisions, against the real stack: the gateway in process, the moderator and the
// notifier as processes, Kafka and the MongoDB-wire store, a webhook receiver on 127.0.0.1. Nothing sleeps.
const WAIT = 30_000;

let stack: ServiceStack;
let gw: Gateway;
let receiver: Receiver;
let tenant: { tenantId: string; key: string };
let other: { tenantId: string; key: string };
let secret: string;

const RULES = {
  rules: [
    { id: 'spam', name: 'Spam', strategies: [{ type: 'patterns', patterns: ['buy now'] }] },
    { id: 'shouting', name: 'Shouting', strategies: [{ type: 'patterns', patterns: ['!!!'] }] },
  ],
};

const call = (method: string, path: string, body?: unknown, key = tenant.key) =>
  gw.request(method, `/api/v1${path}`, { key, ...(body === undefined ? {} : { body }) });

interface Row {
  ruleId: string;
  ruleSetVersion: number;
  flags: number;
  reviewed: number;
  confirmed: number;
  overturned: number;
  precision: number | null;
  overturnRate: number | null;
}
interface Report {
  rules: Row[];
  series: Array<Omit<Row, 'ruleId' | 'ruleSetVersion'> & { day: string }>;
}

const report = async (query = '', key = tenant.key): Promise<Report> => {
  const reply = await call('GET', `/rules/precision${query}`, undefined, key);
  expect(reply.status).toBe(200);
  return reply.body as Report;
};
const rowOf = async (ruleId: string, query = '') => (await report(query)).rules.find((row) => row.ruleId === ruleId);
const moderate = async (clientId: string, text: string, user?: string) => {
  const reply = await call('POST', '/moderate', {
    clientId,
    name: 'n',
    entity: 'post',
    content: text,
    ...(user ? { user: { clientId: user } } : {}),
  });
  expect(reply.status).toBe(200);
  return reply.body as { status: string; ruleSetVersion: number };
};
const decideRecord = async (clientId: string, status: 'Flagged' | 'Compliant') => {
  const reply = await call('POST', `/records/${recordIdFor(tenant.tenantId, clientId)}/moderations`, {
    status,
    reason: 'reviewed',
  });
  expect(reply.status).toBeLessThan(300);
};
const degraded = () =>
  receiver.received.filter((hook) => (JSON.parse(hook.body) as { event: string }).event === 'rule.degraded');

let version: number;

beforeAll(async () => {
  stack = await startServiceStack({
    name: 'gwprec',
    moderatorEnv: { TENANT_CONFIG_TTL_MS: '0' },
    notifierEnv: () => ({ WEBHOOK_RETRY_SCHEDULE_S: '0.5,1,1' }),
    readyMs: WAIT,
  });
  ({ gw, receiver } = stack);
  tenant = await gw.newTenant();
  other = await gw.newTenant();
  const endpoint = await call('POST', '/webhook-endpoints', { url: receiver.url, events: ['rule.degraded'] });
  expect(endpoint.status).toBe(201);
  secret = (endpoint.body as { data: { secret: string } }).data.secret;
  const put = await call('PUT', '/rules', RULES);
  expect(put.status).toBe(200);
  version = (put.body as { version: number }).version;
  const settings = await call('PATCH', '/settings', { ruleDegradedOverturnRate: 0.5, ruleDegradedMinReviews: 2 });
  expect(settings.status).toBe(200);
  expect(settings.body).toMatchObject({ ruleDegradedOverturnRate: 0.5, ruleDegradedMinReviews: 2 });
}, 120_000);

afterAll(() => stack?.close());

describe('rule precision', () => {
  it('counts flags per rule and version as moderations are committed, and nothing for compliant ones', async () => {
    expect(await moderate('p1', 'buy now!!!')).toMatchObject({ status: 'Flagged', ruleSetVersion: version });
    await moderate('p2', 'buy now');
    await moderate('p3', 'buy now');
    await moderate('ok', 'a calm day');
    const rows = (await report()).rules;
    expect(rows).toEqual([
      expect.objectContaining({ ruleId: 'spam', ruleSetVersion: version, flags: 3, reviewed: 0, precision: null }),
      expect.objectContaining({ ruleId: 'shouting', ruleSetVersion: version, flags: 1, reviewed: 0 }),
    ]);
    // Another tenant sees none of it.
    expect((await report('', other.key)).rules).toEqual([]);
  });

  it('counts a human decision against the rules that flagged the record: confirmed or overturned', async () => {
    await decideRecord('p2', 'Flagged');
    expect(await rowOf('spam')).toMatchObject({ flags: 3, reviewed: 1, confirmed: 1, overturned: 0, precision: 1 });
    await decideRecord('p1', 'Compliant');
    expect(await rowOf('spam')).toMatchObject({ reviewed: 2, confirmed: 1, overturned: 1, precision: 0.5 });
    expect(await rowOf('shouting')).toMatchObject({ flags: 1, reviewed: 1, overturned: 1, overturnRate: 1 });
    const today = new Date().toISOString().slice(0, 10);
    expect((await report(`?rule=spam&version=${version}`)).series).toEqual([
      expect.objectContaining({ day: today, flags: 3, reviewed: 2, precision: 0.5 }),
    ]);
  });

  it('raises rule.degraded once per rule and version when the overturn rate passes the threshold, signed', async () => {
    // spam: 2 reviewed, 1 overturned (0.5 ≥ 0.5, 2 ≥ 2 reviews): degraded with the second review.
    await waitFor(() => degraded().length >= 1, { timeoutMs: WAIT, what: 'the rule.degraded webhook' });
    const hook = degraded()[0]!;
    const verified = new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>) as {
      event: string;
      payload: Record<string, unknown>;
    };
    expect(verified).toMatchObject({
      event: 'rule.degraded',
      payload: { ruleId: 'spam', ruleSetVersion: version, reviewed: 2, overturned: 1, threshold: 0.5, minReviews: 2 },
    });
    // A changed decision moves the count, and the rule is not raised again under this version.
    await decideRecord('p2', 'Compliant');
    expect(await rowOf('spam')).toMatchObject({ reviewed: 2, confirmed: 0, overturned: 2, precision: 0 });
    const metrics = await fetch(`http://127.0.0.1:${await adminPortOf(stack.moderator)}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^moderator_rules_degraded_total 1$/m);
    expect(metrics).toMatch(/^moderator_rule_reviews_total\{outcome="overturned"\} [1-9]/m);
    expect(degraded().map((h) => (JSON.parse(h.body) as { payload: { ruleId: string } }).payload.ruleId)).toEqual([
      'spam',
    ]);
  });

  it("counts a person's decision on an automatically suspended user against the suspending record's rules", async () => {
    await moderate('u1-post', 'buy now', 'author-1');
    const user = userIdFor(tenant.tenantId, 'author-1');
    expect((await call('GET', `/users/${user}`)).body).toMatchObject({ data: { actionStatus: 'Suspended' } });
    const before = (await rowOf('spam'))!;
    const reinstated = await call('POST', `/users/${user}/status`, { status: 'Compliant', reason: 'not spam' });
    expect(reinstated.status).toBeLessThan(300);
    expect(await rowOf('spam')).toMatchObject({
      flags: before.flags,
      reviewed: before.reviewed + 1,
      overturned: before.overturned + 1,
    });
  });

  it('answers 400 validation_error for a window it does not take', async () => {
    for (const query of [
      '?from=2026-03-02&to=2026-03-01',
      '?from=2020-01-01&to=2026-01-01',
      '?from=2026-13-01',
      '?rule=A%20B',
    ]) {
      const reply = await call('GET', `/rules/precision${query}`);
      expect([reply.status, (reply.body as { error: { code: string } }).error.code]).toEqual([400, 'validation_error']);
    }
  });

  it('runs shadow rules beside the live ones without acting, and counts agreement with live results and people', async () => {
    const shadowTenant = await gw.newTenant();
    const as = (method: string, path: string, body?: unknown) => call(method, path, body, shadowTenant.key);
    const rules = {
      rules: [
        { id: 'spam', name: 'Spam', strategies: [{ type: 'patterns', patterns: ['buy now'] }] },
        { id: 'strict', name: 'Strict', shadow: true, strategies: [{ type: 'patterns', patterns: ['cheap'] }] },
      ],
    };
    expect((await as('PUT', '/rules', rules)).status).toBe(200);
    const shadowRow = async () => {
      const reply = await as('GET', '/rules/precision');
      return (reply.body as { shadow: Array<Record<string, number | string>> }).shadow.find(
        (r) => r.ruleId === 'strict',
      );
    };
    // Shadow work is bounded per tenant (one at a time): each record's judgement is awaited before the next.
    const cases: Array<[string, string, string]> = [
      ['s1', 'cheap stuff', 'Compliant'],
      ['s2', 'buy now, cheap', 'Flagged'],
      ['s3', 'a calm day', 'Compliant'],
    ];
    for (const [index, [clientId, text, status]] of cases.entries()) {
      const reply = await as('POST', '/moderate', { clientId, name: 'n', entity: 'post', content: text });
      expect(reply.body).toMatchObject({ status });
      expect((reply.body as { rules: string[] }).rules).not.toContain('strict');
      await waitFor(async () => (await shadowRow())?.runs === index + 1, {
        timeoutMs: WAIT,
        what: `shadow run ${index + 1}`,
      });
    }
    expect(await shadowRow()).toMatchObject({ runs: 3, wouldFlag: 2, agreeLive: 2, disagreeLive: 1, agreeHuman: 0 });
    // A person flags the record only the shadow rule caught: the shadow rule agreed with them.
    const decided = await as('POST', `/records/${recordIdFor(shadowTenant.tenantId, 's1')}/moderations`, {
      status: 'Flagged',
      reason: 'cheap is spam here',
    });
    expect(decided.status).toBeLessThan(300);
    expect(await shadowRow()).toMatchObject({ agreeHuman: 1, disagreeHuman: 0 });
    // The live rule's counts know nothing of it.
    const live = ((await as('GET', '/rules/precision')).body as Report).rules;
    expect(live.map((row) => [row.ruleId, row.flags, row.reviewed])).toEqual([['spam', 1, 0]]);
  });
});
