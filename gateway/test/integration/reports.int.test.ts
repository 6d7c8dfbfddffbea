import type { Receiver } from '../../../deploy/e2e/support';
import { waitFor } from '../../../deploy/test-support';
import { startServiceStack, type Gateway, type ServiceStack } from './harness';

// Reports through the API against the real stack: the gateway in process, the moderator and the notifier as
// processes, Kafka and the MongoDB-wire store, a webhook receiver on 127.0.0.1. Nothing sleeps.
const WAIT = 30_000;

let stack: ServiceStack;
let gw: Gateway;
let receiver: Receiver;
let alice: { tenantId: string; key: string };
let bob: { tenantId: string; key: string };

beforeAll(async () => {
  stack = await startServiceStack({
    name: 'gwrep',
    moderatorEnv: { TENANT_CONFIG_TTL_MS: '0' },
    notifierEnv: () => ({ WEBHOOK_RETRY_SCHEDULE_S: '0.5,1,1' }),
    readyMs: WAIT,
  });
  ({ gw, receiver } = stack);
  alice = await gw.newTenant();
  bob = await gw.newTenant();
  const endpoint = await gw.request('POST', '/api/v1/webhook-endpoints', {
    key: alice.key,
    body: { url: receiver.url, events: ['report.decided'] },
  });
  expect(endpoint.status).toBe(201);
  for (const clientId of ['post-1', 'post-2', 'post-3', 'post-4']) {
    const posted = await gw.request('POST', '/api/v1/moderate', {
      key: alice.key,
      body: { clientId, name: 'A post', entity: 'post', content: 'a lovely day', user: { clientId: 'author-1' } },
    });
    expect(posted.status).toBe(200);
  }
}, 120_000);

afterAll(() => stack?.close());

const EMAIL = 'reader@example.com';
const reportBody = (extra: Record<string, unknown> = {}) => ({
  target: { type: 'record', clientId: 'post-1' },
  reporter: { type: 'user', id: 'reader-1', email: EMAIL },
  category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
  explanation: 'a fake shop',
  ...extra,
});
const notice = {
  ground: 'ILLEGAL_CONTENT',
  legalGround: 'Consumer protection law',
  url: 'https://platform.example/p/1',
  goodFaith: true,
};
const paths = (details: Array<{ path: unknown[] }>) => details.map((detail) => detail.path.join('.')).sort();

describe('reports API', () => {
  it('acknowledges a notice with 202 and its id, and answers the same reporter and target with that report', async () => {
    const created = await gw.request('POST', '/api/v1/reports', { key: alice.key, body: reportBody(notice) });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({
      duplicate: false,
      data: {
        id: expect.stringMatching(/^rpt_/),
        status: 'Open',
        target: { type: 'record', clientId: 'post-1' },
        reporter: { type: 'user', id: 'reader-1', hasEmail: true, email: null },
        ground: 'ILLEGAL_CONTENT',
        legalGround: 'Consumer protection law',
        goodFaith: true,
        decision: null,
        targetOpenReports: 1,
      },
    });
    const again = await gw.request('POST', '/api/v1/reports', {
      key: alice.key,
      body: reportBody({ explanation: 'still a fake shop' }),
    });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({
      duplicate: true,
      data: { id: created.body.data.id, explanation: 'a fake shop' },
    });

    const read = await gw.request('GET', `/api/v1/reports/${created.body.data.id}`, { key: alice.key });
    expect(read.body.data.reporter.email).toBe(EMAIL);
    const record = await gw.request('GET', `/api/v1/records/${created.body.data.target.id}`, { key: alice.key });
    expect(record.body.data.openReportsCount).toBe(1);
    expect(gw.logText()).not.toContain(EMAIL);
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    [
      'a notice without its URL and good faith',
      { ...notice, url: undefined, goodFaith: undefined },
      ['goodFaith', 'url'],
    ],
    ['notice fields on a report against the terms', { legalGround: 'x' }, ['legalGround']],
    ['an explanation of 4001 characters', { explanation: 'e'.repeat(4001) }, ['explanation']],
    ['an unknown category', { category: 'STATEMENT_CATEGORY_RUDENESS' }, ['category']],
    ['a target named twice', { target: { type: 'record', id: 'rec_x', clientId: 'post-1' } }, ['target']],
    [
      'a trusted flagger with an email',
      { reporter: { type: 'trusted_flagger', id: 'x', email: EMAIL } },
      ['reporter.email'],
    ],
    ['a malformed email', { reporter: { type: 'user', id: 'r', email: 'nope' } }, ['reporter.email']],
    ['a URL that is not http(s)', { ...notice, url: 'javascript:alert(1)' }, ['url']],
  ])('refuses %s with 400 validation_error and the paths', async (_name, extra, expected) => {
    const reply = await gw.request('POST', '/api/v1/reports', { key: alice.key, body: reportBody(extra) });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('validation_error');
    expect(paths(reply.body.error.details as Array<{ path: unknown[] }>)).toEqual(expected);
  });

  it('refuses an organisation not in the trusted flaggers, takes a listed one, and lists trusted reports', async () => {
    const flagger = { type: 'trusted_flagger', id: 'hotline' };
    const refused = await gw.request('POST', '/api/v1/reports', {
      key: alice.key,
      body: reportBody({ target: { type: 'record', clientId: 'post-2' }, reporter: flagger }),
    });
    expect(refused.status).toBe(400);
    expect(paths(refused.body.error.details as Array<{ path: unknown[] }>)).toEqual(['reporter.id']);
    const patched = await gw.request('PATCH', '/api/v1/settings', {
      key: alice.key,
      body: { trustedFlaggers: [{ id: 'hotline', name: 'The Hotline' }] },
    });
    expect(patched.body.trustedFlaggers).toEqual([{ id: 'hotline', name: 'The Hotline' }]);
    const taken = await gw.request('POST', '/api/v1/reports', {
      key: alice.key,
      body: reportBody({ target: { type: 'record', clientId: 'post-2' }, reporter: flagger }),
    });
    expect(taken.status).toBe(202);
    expect(taken.body.data.reporter).toMatchObject({ type: 'trusted_flagger', name: 'The Hotline' });
    const trusted = await gw.request('GET', '/api/v1/reports?trusted=true', { key: alice.key });
    expect((trusted.body.data as Array<{ id: string }>).map((r) => r.id)).toEqual([taken.body.data.id]);
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ id: `f${i}`, name: 'n' }));
    const bounded = await gw.request('PATCH', '/api/v1/settings', {
      key: alice.key,
      body: { trustedFlaggers: tooMany },
    });
    expect(bounded.status).toBe(400);
  });

  it('flags the record on an Actioned decision and tells the receiver with report.decided, never the email', async () => {
    const created = await gw.request('POST', '/api/v1/reports', {
      key: alice.key,
      body: reportBody({ target: { type: 'record', clientId: 'post-3' } }),
    });
    const id = created.body.data.id as string;
    const decided = await gw.request('POST', `/api/v1/reports/${id}/decision`, {
      key: alice.key,
      body: { outcome: 'Actioned', action: 'Flag', reason: 'a scam shop' },
    });
    expect(decided.status).toBe(200);
    expect(decided.body.data).toMatchObject({
      status: 'Decided',
      decision: { outcome: 'Actioned', action: 'Flag', decisionId: expect.stringMatching(/^mod_/) },
      targetOpenReports: 0,
    });
    const record = await gw.request('GET', `/api/v1/records/${created.body.data.target.id}`, { key: alice.key });
    expect(record.body.data).toMatchObject({ moderationStatus: 'Flagged', moderationStatusVia: 'Manual' });

    await waitFor(() => receiver.received.some((hook) => hook.body.includes(id)), {
      timeoutMs: WAIT,
      what: 'the report.decided webhook',
    });
    const hook = receiver.received.find((candidate) => candidate.body.includes(id))!;
    expect(JSON.parse(hook.body)).toMatchObject({
      event: 'report.decided',
      id,
      payload: {
        id,
        target: { type: 'record', clientId: 'post-3' },
        reporter: { type: 'user', id: 'reader-1' },
        outcome: 'Actioned',
        action: 'Flag',
      },
    });
    expect(hook.body).not.toContain(EMAIL);
    expect(stack.notifier.output()).not.toContain(EMAIL);
    expect(stack.moderator.output()).not.toContain(EMAIL);
  });

  it('records no action with its reason, refuses a different decision with 409, and a user target only Suspend or Ban', async () => {
    const created = await gw.request('POST', '/api/v1/reports', {
      key: alice.key,
      body: reportBody({ target: { type: 'record', clientId: 'post-4' } }),
    });
    const id = created.body.data.id as string;
    const wrong = await gw.request('POST', `/api/v1/reports/${id}/decision`, {
      key: alice.key,
      body: { outcome: 'Actioned', action: 'Ban', reason: 'r' },
    });
    expect(wrong.status).toBe(400);
    const none = await gw.request('POST', `/api/v1/reports/${id}/decision`, {
      key: alice.key,
      body: { outcome: 'NoAction', reason: 'satire' },
    });
    expect(none.body.data.decision).toMatchObject({ outcome: 'NoAction', action: null, reason: 'satire' });
    const other = await gw.request('POST', `/api/v1/reports/${id}/decision`, {
      key: alice.key,
      body: { outcome: 'Actioned', action: 'Flag', reason: 'changed my mind' },
    });
    expect(other.status).toBe(409);

    const onUser = await gw.request('POST', '/api/v1/reports', {
      key: alice.key,
      body: reportBody({ target: { type: 'user', clientId: 'author-1' } }),
    });
    expect(onUser.status).toBe(202);
    const user = await gw.request('GET', `/api/v1/users/${onUser.body.data.target.id}`, { key: alice.key });
    expect(user.body.data.openReportsCount).toBe(1);
  });

  it('pages and filters reports, and keeps tenants apart', async () => {
    const open = await gw.request('GET', '/api/v1/reports?status=Open&limit=1', { key: alice.key });
    expect(open.status).toBe(200);
    expect(open.body.data).toHaveLength(1);
    expect(open.body.has_more).toBe(true);
    const next = await gw.request('GET', `/api/v1/reports?status=Open&limit=1&starting_after=${open.body.data[0].id}`, {
      key: alice.key,
    });
    expect(next.body.data[0].id).not.toBe(open.body.data[0].id);
    const target = open.body.data[0].target.id as string;
    const onTarget = await gw.request('GET', `/api/v1/reports?target=${target}`, { key: alice.key });
    expect((onTarget.body.data as Array<{ target: { id: string } }>).every((r) => r.target.id === target)).toBe(true);
    expect(
      (onTarget.body.data as Array<{ reporter: { email: unknown } }>).every((r) => r.reporter.email === null),
    ).toBe(true);

    expect((await gw.request('GET', '/api/v1/reports?status=Closed', { key: alice.key })).status).toBe(400);
    expect((await gw.request('GET', `/api/v1/reports/${open.body.data[0].id}`, { key: bob.key })).status).toBe(404);
    expect((await gw.request('GET', '/api/v1/reports', { key: bob.key })).body).toEqual({ data: [], has_more: false });
    const foreign = await gw.request('POST', '/api/v1/reports', { key: bob.key, body: reportBody() });
    expect(foreign.status).toBe(404);
  });
});
