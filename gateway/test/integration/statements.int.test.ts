import { userIdFor } from '@vigil/proto';
import type { Receiver } from '../../../deploy/e2e/support';
import { uniqueName } from '../../../deploy/test-support';
import { expiryDays, startMailingStack, type MailingStack, type ReceivedHook } from './console-support';
import type { Gateway } from './harness';
import { reportNewPost } from './api-support';

// Policies and statements of reasons against the real stack: the gateway in process, the moderator and the notifier as
// processes, Kafka and the MongoDB-wire store, a webhook receiver and an SMTP server on 127.0.0.1, and the appeal and
// console pages in a real headless Chromium. Nothing sleeps.
const WAIT = 60_000;
const APPEAL_SECRET = 'test-appeal-secret-of-at-least-32-characters';

let stack: MailingStack;
let gw: Gateway;
let receiver: Receiver;
let alice: { tenantId: string; key: string };
let bob: { tenantId: string; key: string };

beforeAll(async () => {
  stack = await startMailingStack({ name: 'gwsor', appealSecret: APPEAL_SECRET, readyMs: WAIT });
  ({ gw, receiver } = stack);
  alice = await gw.newTenant();
  bob = await gw.newTenant();
  for (const tenant of [alice, bob]) {
    const endpoint = await gw.request('POST', '/api/v1/webhook-endpoints', {
      key: tenant.key,
      body: { url: receiver.url, events: ['record.flagged', 'user.suspended', 'user.compliant'] },
    });
    expect(endpoint.status).toBe(201);
  }
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

type Webhook = ReceivedHook & {
  payload: { id: string; statement?: Record<string, unknown> };
};
const webhookFor = (event: string, subject: string) => stack.webhookFor<Webhook>(event, subject);
const paths = (details: Array<{ path: unknown[] }>) => details.map((detail) => detail.path.join('.')).sort();

const FRAUD = {
  id: 'fraud',
  name: 'Fraud',
  ground: 'ILLEGAL_CONTENT',
  legalGround: 'Penal code §263',
  category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
  explanation: 'Selling fakes is fraud under {{policy}}; found by {{rules}}.',
  referenceUrl: 'https://law.example/263',
};
const SCAMS_RULE = {
  id: 'scams',
  name: 'Scams',
  strategies: [{ type: 'blocklist', words: ['cheapwatches'] }],
  policy: 'fraud',
};

describe('policies API', () => {
  it('lists the default policy for a tenant without policies', async () => {
    const listed = await gw.request('GET', '/api/v1/policies', { key: bob.key });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      expect.objectContaining({
        id: 'default',
        ground: 'INCOMPATIBLE_CONTENT',
        category: 'STATEMENT_CATEGORY_OTHER_VIOLATION_TC',
      }),
    ]);
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ['illegal content without its legal ground', { legalGround: undefined }, ['legalGround']],
    ['a legal ground on a terms policy', { ground: 'INCOMPATIBLE_CONTENT' }, ['legalGround']],
    ['an unknown category', { category: 'STATEMENT_CATEGORY_RUDENESS' }, ['category']],
    ['an unknown placeholder', { explanation: 'Dear {{name}}' }, ['explanation']],
    ['an explanation of 2001 characters', { explanation: 'e'.repeat(2001) }, ['explanation']],
    ['a reference that is not http(s)', { referenceUrl: 'javascript:alert(1)' }, ['referenceUrl']],
    ['an unknown field', { colour: 'red' }, ['colour']],
  ])('refuses %s with 400 validation_error', async (_name, change, expected) => {
    const reply = await gw.request('POST', '/api/v1/policies', { key: alice.key, body: { ...FRAUD, ...change } });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('validation_error');
    expect(paths(reply.body.error.details as Array<{ path: unknown[] }>)).toEqual(expected);
  });

  it('creates, reads, changes and refuses a second policy of the same id; documents the routes', async () => {
    const created = await gw.request('POST', '/api/v1/policies', { key: alice.key, body: FRAUD });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual(FRAUD);
    const again = await gw.request('POST', '/api/v1/policies', { key: alice.key, body: FRAUD });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');
    const patched = await gw.request('PATCH', '/api/v1/policies/fraud', {
      key: alice.key,
      body: { name: 'Fraud and fakes' },
    });
    expect(patched.body.data).toMatchObject({ name: 'Fraud and fakes', legalGround: 'Penal code §263' });
    const broken = await gw.request('PATCH', '/api/v1/policies/fraud', { key: alice.key, body: { legalGround: null } });
    expect(broken.status).toBe(400);
    expect((await gw.request('GET', '/api/v1/policies/fraud', { key: bob.key })).status).toBe(404);
    expect((await gw.request('GET', '/api/v1/policies/fraud', { key: alice.key })).body.data.name).toBe(
      'Fraud and fakes',
    );
    const openapi = await gw.request('GET', '/openapi.json');
    expect(Object.keys(openapi.body.paths as object)).toEqual(
      expect.arrayContaining(['/api/v1/policies', '/api/v1/policies/{id}', '/api/v1/records/{id}/statements']),
    );
  });

  it('refuses to delete a policy a live rule names, and a decision naming an unknown policy', async () => {
    const rules = await gw.request('PUT', '/api/v1/rules', { key: alice.key, body: { rules: [SCAMS_RULE] } });
    expect(rules.status).toBe(200);
    const refused = await gw.request('DELETE', '/api/v1/policies/fraud', { key: alice.key });
    expect(refused.status).toBe(409);
    const posted = await gw.request('POST', '/api/v1/moderate', {
      key: alice.key,
      body: { clientId: uniqueName('ok'), name: 'A post', entity: 'post', content: 'a lovely day' },
    });
    const decided = await gw.request('POST', `/api/v1/records/${posted.body.id}/moderations`, {
      key: alice.key,
      body: { status: 'Flagged', reason: 'checked', policy: 'no-such-policy' },
    });
    expect(decided.status).toBe(400);
    expect(paths(decided.body.error.details as Array<{ path: unknown[] }>)).toEqual(['policy']);
  });
});

describe('statements of reasons', () => {
  it("carries the rule's policy in the flag's webhook and the API, with the configured restriction", async () => {
    const settings = await gw.request('PATCH', '/api/v1/settings', {
      key: alice.key,
      body: { flaggedVisibility: 'DECISION_VISIBILITY_CONTENT_REMOVED', appealWindowDays: 200 },
    });
    expect(settings.status).toBe(200);
    const posted = await gw.request('POST', '/api/v1/moderate', {
      key: alice.key,
      body: {
        clientId: uniqueName('p'),
        name: 'Watches',
        entity: 'listing',
        content: 'buy cheapwatches here',
        user: { clientId: uniqueName('seller') },
      },
    });
    expect(posted.body.status).toBe('Flagged');
    const hook = await webhookFor('record.flagged', posted.body.id as string);
    expect(hook.payload.statement).toMatchObject({
      kind: 'restriction',
      subject: { type: 'record', id: posted.body.id },
      restriction: { visibility: ['DECISION_VISIBILITY_CONTENT_REMOVED'], endDate: null },
      ground: 'DECISION_GROUND_ILLEGAL_CONTENT',
      legalGround: 'Penal code §263',
      category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
      explanation: 'Selling fakes is fraud under Fraud and fakes; found by scams.',
      policy: { id: 'fraud', name: 'Fraud and fakes' },
      source: 'SOURCE_VOLUNTARY',
      automatedDetection: true,
      automatedDecision: 'AUTOMATED_DECISION_FULLY',
      redress: { appealWindowDays: 200 },
    });
    const read = await gw.request('GET', `/api/v1/records/${posted.body.id}/statements`, { key: alice.key });
    expect(read.status).toBe(200);
    expect(read.body.data).toHaveLength(1);
    expect(read.body.data[0]).toMatchObject({ ...hook.payload.statement, redress: expect.any(Object) });
    // The user the flag suspended (threshold 1) gets the suspension's statement in their webhook.
    const user = await webhookFor('user.suspended', posted.body.user as string);
    expect(user.payload.statement).toMatchObject({
      restriction: { account: 'DECISION_ACCOUNT_SUSPENDED' },
      automatedDecision: 'AUTOMATED_DECISION_FULLY',
    });

    // A person upholding the flag: a new statement, partially automated.
    const confirmed = await gw.request('POST', `/api/v1/records/${posted.body.id}/moderations`, {
      key: alice.key,
      body: { status: 'Flagged', reason: 'seen it', policy: 'fraud' },
    });
    expect(confirmed.status).toBe(200);
    const both = await gw.request('GET', `/api/v1/records/${posted.body.id}/statements`, { key: alice.key });
    expect(both.body.data).toHaveLength(2);
    expect(both.body.data[1]).toMatchObject({
      automatedDetection: true,
      automatedDecision: 'AUTOMATED_DECISION_PARTIALLY',
      facts: expect.stringContaining('seen it'),
    });
  });

  it('gives rules without a policy, and tenants without policies, the default policy', async () => {
    const posted = await gw.request('POST', '/api/v1/moderate', {
      key: bob.key,
      body: { clientId: uniqueName('p'), name: 'A post', entity: 'post', content: 'you are a fucking idiot' },
    });
    expect(posted.body.status).toBe('Flagged');
    const read = await gw.request('GET', `/api/v1/records/${posted.body.id}/statements`, { key: bob.key });
    expect(read.body.data).toEqual([
      expect.objectContaining({
        ground: 'DECISION_GROUND_INCOMPATIBLE_CONTENT',
        category: 'STATEMENT_CATEGORY_OTHER_VIOLATION_TC',
        policy: { id: 'default', name: 'Terms of service' },
        restriction: { visibility: ['DECISION_VISIBILITY_CONTENT_DISABLED'], endDate: null },
        redress: expect.objectContaining({ appealWindowDays: 183 }),
      }),
    ]);
    // Another tenant reads nothing of it.
    expect((await gw.request('GET', `/api/v1/records/${posted.body.id}/statements`, { key: alice.key })).status).toBe(
      404,
    );
  });

  it("holds nothing of a passthrough record: no name, content, URL or the user's email", async () => {
    const secrets = ['Very Private Name', 'PrivateText', 'https://private.example/x', 'hidden@example.com'];
    const posted = await gw.request('POST', '/api/v1/moderate', {
      key: alice.key,
      body: {
        clientId: uniqueName('pt'),
        clientUrl: 'https://private.example/x',
        name: 'Very Private Name',
        entity: 'post',
        content: { text: 'PrivateText: cheapwatches', externalUrls: ['https://private.example/x'] },
        passthrough: true,
        user: { clientId: uniqueName('pu'), email: 'hidden@example.com', name: 'Very Private Name' },
      },
    });
    expect(posted.body.status).toBe('Flagged');
    const hook = await webhookFor('record.flagged', posted.body.id as string);
    const read = await gw.request('GET', `/api/v1/records/${posted.body.id}/statements`, { key: alice.key });
    expect(read.body.data).toHaveLength(1);
    for (const text of [JSON.stringify(hook.payload.statement), JSON.stringify(read.body.data)]) {
      for (const secret of secrets) expect(text).not.toContain(secret);
      expect(text).not.toContain('cheapwatches');
    }
  });

  it('names a trusted flagger notice as the source of the action it led to', async () => {
    await gw.request('PATCH', '/api/v1/settings', {
      key: alice.key,
      body: { trustedFlaggers: [{ id: 'hotline', name: 'The Hotline' }] },
    });
    const { posted, report } = await reportNewPost(gw, alice, {
      reporter: { type: 'trusted_flagger', id: 'hotline' },
      category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
      ground: 'ILLEGAL_CONTENT',
      legalGround: 'Penal code §263',
      url: 'https://platform.example/p',
      goodFaith: true,
      explanation: 'fake watches',
    });
    expect(report.status).toBe(202);
    const decided = await gw.request('POST', `/api/v1/reports/${report.body.data.id}/decision`, {
      key: alice.key,
      body: { outcome: 'Actioned', action: 'Flag', reason: 'confirmed fake', policy: 'fraud' },
    });
    expect(decided.status).toBe(200);
    const read = await gw.request('GET', `/api/v1/records/${posted.body.id}/statements`, { key: alice.key });
    expect(read.body.data).toEqual([
      expect.objectContaining({
        source: 'SOURCE_TRUSTED_FLAGGER',
        reportId: report.body.data.id,
        automatedDetection: false,
        automatedDecision: 'AUTOMATED_DECISION_NOT_AUTOMATED',
        policy: { id: 'fraud', name: 'Fraud and fakes' },
      }),
    ]);
  });

  it('sends the statement in the suspension and reinstatement emails, and lists it per user', async () => {
    const clientId = uniqueName('mailed');
    const email = `${clientId}@example.com`;
    await gw.request('PATCH', '/api/v1/settings', { key: alice.key, body: { emails: { enabled: true } } });
    const posted = await gw.request('POST', '/api/v1/moderate', {
      key: alice.key,
      body: {
        clientId: uniqueName('m'),
        name: 'A post',
        entity: 'post',
        content: 'hello',
        user: { clientId, email, username: 'sam' },
      },
    });
    const userId = userIdFor(alice.tenantId, clientId);
    expect(posted.body.user).toBe(userId);
    const suspended = await gw.request('POST', `/api/v1/users/${userId}/status`, {
      key: alice.key,
      body: { status: 'Suspended', reason: 'sold fakes twice', policy: 'fraud' },
    });
    expect(suspended.status).toBe(200);
    const mailTo = (kind: string) => stack.mailTo(email, kind);
    const suspension = await mailTo('suspended');
    expect(suspension.text).toContain('Statement of reasons');
    expect(suspension.text).toContain('Selling fakes is fraud under Fraud and fakes');
    expect(suspension.text).toContain('Ground: illegal content (Penal code §263)');
    expect(suspension.text).toMatch(/appeal this decision until \d{4}-\d{2}-\d{2} \(200 days\)/);
    // The emailed link lives as long as the appeal window (200 days), not the shorter default link lifetime.
    const emailed = /\/appeal\?token=([A-Za-z0-9_.-]+)/.exec(suspension.text ?? '')?.[1];
    expect(expiryDays(emailed)).toBeGreaterThan(199);

    const statements = await gw.request('GET', `/api/v1/users/${userId}/statements`, { key: alice.key });
    expect(statements.status).toBe(200);
    expect(statements.body.data[0]).toMatchObject({
      subject: { type: 'user', id: userId },
      restriction: { account: 'DECISION_ACCOUNT_SUSPENDED' },
      redress: { appealUrl: expect.stringContaining('/appeal?token=') },
    });
    const listed = statements.body.data[0].redress.appealUrl as string;
    expect(expiryDays(new URL(listed).searchParams.get('token') ?? undefined)).toBeGreaterThan(199);

    // The appeal page shows the statement, in a real browser.
    const user = await gw.request('GET', `/api/v1/users/${userId}`, { key: alice.key });
    const link = new URL(user.body.data.appealUrl as string);
    const ctx = await stack.newContext();
    const page = await ctx.newPage();
    await page.goto(`${gw.url}${link.pathname}${link.search}`);
    const section = page.locator('#statement');
    await section.getByText('Penal code §263').waitFor();
    await section.getByText('Selling fakes is fraud').waitFor();
    expect(await page.locator('#redress').innerText()).toMatch(/appeal below until \d{4}-\d{2}-\d{2}\s+\(200 days\)/);
    await ctx.close();

    await gw.request('POST', `/api/v1/users/${userId}/status`, {
      key: alice.key,
      body: { status: 'Compliant', reason: 'fixed' },
    });
    const reinstated = await mailTo('reinstated');
    expect(reinstated.text).toContain('Statement of reasons');
    expect(reinstated.text).toContain('The account was reinstated by a moderator');
  });
});

describe('policies in the console', () => {
  it('adds a policy through the form, and a report decided in the queue names it', async () => {
    const admin = await gw.newMember(bob.tenantId, 'admin');
    const ctx = await stack.newContext();
    const page = await ctx.newPage();
    await page.goto(`${gw.url}/console/records`);
    await page.waitForURL(/\/console\/sign-in/);
    await page.fill('input[name=email]', admin.email);
    await page.fill('input[name=password]', admin.password);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/console\/records/);
    await page.goto(`${gw.url}/console/policies`);
    const form = page.locator('#new-policy');
    await form.locator('input[name=id]').fill('hate');
    await form.locator('input[name=name]').fill('Hate speech');
    await form.locator('select[name=category]').selectOption('STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH');
    await form.locator('textarea[name=explanation]').fill('Hateful content breaks our terms.');
    await form.locator('button[type=submit]').click();
    await page.locator('tr[data-id=hate]', { hasText: 'Hate speech' }).waitFor();
    const listed = await gw.request('GET', '/api/v1/policies', { key: bob.key });
    expect(listed.body.data.map((policy: { id: string }) => policy.id)).toEqual(['default', 'hate']);

    // A report decided in the queue names the policy; the flag's statement rests on it.
    const { posted, report } = await reportNewPost(gw, bob, {
      reporter: { type: 'user', id: 'reader-9' },
      category: 'STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH',
      explanation: 'hateful',
    });
    await page.goto(`${gw.url}/console/reports`);
    const card = page.locator(`article[data-id="${report.body.data.id}"]`);
    await card.locator('select[name=policy]').selectOption('hate');
    await card.locator('textarea[name=reason]').fill('hateful indeed');
    await card.locator('button[value=Flag]').click();
    await page.waitForURL(/\/console\/reports$/);
    await ctx.close();
    const read = await gw.request('GET', `/api/v1/records/${posted.body.id}/statements`, { key: bob.key });
    expect(read.body.data).toEqual([
      expect.objectContaining({
        policy: { id: 'hate', name: 'Hate speech' },
        category: 'STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH',
        source: 'SOURCE_TYPE_OTHER_NOTIFICATION',
        reportId: report.body.data.id,
      }),
    ]);
  });
});
