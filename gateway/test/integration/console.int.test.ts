import http from 'node:http';
import { COLLECTIONS } from '@vigil/proto';
import { uniqueName, waitFor } from '../../../deploy/test-support';
import { startModeratorStack, type Gateway, type ModeratorStack } from './harness';

/** The console and the appeal page over plain HTTP, with the real moderator behind the gateway. */
let stack: ModeratorStack;
let gw: Gateway;
let alice: { tenantId: string; key: string };
let bob: { tenantId: string; key: string };

const PROFANE = 'you are a fucking idiot';

interface Page {
  status: number;
  location: string | null;
  text: string;
  headers: Headers;
}

const sessions = () => gw.db.collection<{ _id: string; memberId: string }>(COLLECTIONS.consoleSessions);
const locks = () =>
  gw.db.collection<{ _id: string; memberId: string; lockedUntil?: Date }>(COLLECTIONS.consoleSignInLocks);

/** A browser stand-in: keeps the session cookie, follows nothing, reads the CSRF token from the last page. */
class Client {
  cookie = '';
  csrf = '';
  constructor(private readonly base: string) {}

  async send(method: string, path: string, form?: Record<string, string>, headers: Record<string, string> = {}) {
    const response = await fetch(this.base + path, {
      method,
      redirect: 'manual',
      headers: {
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    const setCookie = response.headers.get('set-cookie');
    if (setCookie) this.cookie = setCookie.split(';')[0]!.endsWith('=') ? '' : setCookie.split(';')[0]!;
    const text = await response.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
    if (csrf) this.csrf = csrf;
    return { status: response.status, location: response.headers.get('location'), text, headers: response.headers };
  }
  get(path: string): Promise<Page> {
    return this.send('GET', path);
  }
  post(path: string, form: Record<string, string>, headers?: Record<string, string>): Promise<Page> {
    return this.send('POST', path, { _csrf: this.csrf, ...form }, headers);
  }
  async signIn(email: string, password: string): Promise<Page> {
    return this.send('POST', '/console/sign-in', { email, password });
  }
}

/**
 * A form POST with the headers a browser sends (which fetch would drop), from `localAddress` if given, answered with
 * its status.
 */
function browserPost(
  base: string,
  path: string,
  headers: Record<string, string>,
  form: Record<string, string>,
  localAddress?: string,
) {
  const body = new URLSearchParams(form).toString();
  return new Promise<number>((resolve, reject) => {
    const req = http.request(
      `${base}${path}`,
      {
        method: 'POST',
        ...(localAddress ? { localAddress } : {}),
        headers: {
          ...headers,
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A sign-in from a given local address (any 127.0.0.0/8 address reaches the gateway on 127.0.0.1). */
function signInFrom(localAddress: string, email: string, password: string): Promise<number> {
  return browserPost(gw.url, '/console/sign-in', {}, { email, password }, localAddress);
}

const codeOf = (page: Page): string | undefined => /data-code="([^"]+)"/.exec(page.text)?.[1];

/** A new member of the tenant, signed in from a browser of their own. */
async function signedInMember(tenantId: string, role?: Parameters<Gateway['newMember']>[1]) {
  const member = await gw.newMember(tenantId, role);
  const browser = new Client(gw.url);
  await browser.signIn(member.email, member.password);
  return { member, browser };
}

beforeAll(async () => {
  stack = await startModeratorStack({
    name: 'gwcon',
    moderatorEnv: { TENANT_CONFIG_TTL_MS: '0' },
    gateway: {
      console: {
        consoleLockoutAttempts: 3,
        consoleLockoutSeconds: 60,
        consoleSignInPerMinute: 0,
        publicUrl: 'http://localhost:8080',
      },
    },
  });
  ({ gw } = stack);
  alice = await gw.newTenant();
  bob = await gw.newTenant();
});
afterAll(async () => {
  await stack?.close();
});

async function flaggedRecord(key: string, clientId: string, userClientId = 'u-1') {
  const reply = await gw.request('POST', '/api/v1/moderate', {
    key,
    body: {
      clientId,
      name: `Post ${clientId}`,
      entity: 'post',
      content: { text: PROFANE, imageUrls: ['https://cdn.example.com/a.png', 'javascript:alert(1)'] },
      user: { clientId: userClientId, username: 'ann' },
    },
  });
  expect(reply.body.status).toBe('Flagged');
  return reply.body as { id: string; user: string };
}

describe('console sessions', () => {
  it('sends a signed-out browser to sign-in, keeping where it was going', async () => {
    const page = await new Client(gw.url).get('/console/records?status=all');
    expect(page.status).toBe(302);
    expect(page.location).toBe('/console/sign-in?next=%2Fconsole%2Frecords%3Fstatus%3Dall');
  });

  it('signs in with an HttpOnly, SameSite=Strict session cookie, and out again', async () => {
    const member = await gw.newMember(alice.tenantId);
    const browser = new Client(gw.url);
    const signedIn = await browser.signIn(member.email.toUpperCase(), member.password);
    expect(signedIn.status).toBe(302);
    const cookie = signedIn.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^vigil_console=[\w-]{43}; path=\/console; expires=.*; samesite=strict; httponly$/);
    expect(cookie).not.toMatch(/secure/i);
    const stored = await sessions().findOne({ memberId: member.id });
    expect(stored?._id).toMatch(/^[0-9a-f]{64}$/);
    expect(cookie).not.toContain(stored!._id);

    const inbox = await browser.get('/console/records');
    expect(inbox.status).toBe(200);
    expect(inbox.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(inbox.text).toContain(member.email);

    const out = await browser.post('/console/sign-out', {});
    expect(out.status).toBe(302);
    expect(await sessions().countDocuments({ memberId: member.id })).toBe(0);
    browser.cookie = `vigil_console=${/vigil_console=([^;]+)/.exec(cookie)![1]}`;
    expect((await browser.get('/console/records')).status).toBe(302);
  });

  it('refuses an expired session', async () => {
    const { member, browser } = await signedInMember(alice.tenantId);
    await sessions().updateOne({ memberId: member.id }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await browser.get('/console/records')).status).toBe(302);
  });

  it('answers a wrong password like an unknown email, and locks the member out after 3 failures', async () => {
    const member = await gw.newMember(alice.tenantId);
    const browser = new Client(gw.url);
    const unknown = await browser.signIn('nobody@example.com', 'whatever-password');
    const wrong = await browser.signIn(member.email, 'wrong-password-1');
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(wrong.text.replace(/value="[^"]*"/g, '')).toBe(unknown.text.replace(/value="[^"]*"/g, ''));
    // The form keeps the email given, never the password.
    expect(wrong.text).toMatch(new RegExp(`name="email"\\s+value="${member.email.replace(/[.+]/g, '\\$&')}"`));
    expect(wrong.text).not.toContain('wrong-password-1');
    await browser.signIn(member.email, 'wrong-password-2');
    await browser.signIn(member.email, 'wrong-password-3');
    expect((await browser.signIn(member.email, member.password)).status).toBe(401);
    await locks().updateMany({ memberId: member.id }, { $set: { lockedUntil: new Date(Date.now() - 1) } });
    expect((await browser.signIn(member.email, member.password)).status).toBe(302);
    expect(gw.logText()).not.toContain(member.email);
    expect(gw.logText()).not.toContain(member.password);
  });

  it('locks out only the address the failures came from: a stranger who knows the email cannot lock the member out', async () => {
    const member = await gw.newMember(alice.tenantId);
    // The stranger connects from another loopback address: another client address to the gateway.
    const stranger = (password: string) => signInFrom('127.0.0.2', member.email, password);
    for (let i = 0; i < 5; i++) expect(await stranger(`guess-${i}`)).toBe(401);
    // The stranger is locked out, even with the right password...
    expect(await stranger(member.password)).toBe(401);
    // ...and the member, from their own address, is not.
    expect((await new Client(gw.url).signIn(member.email, member.password)).status).toBe(302);
    expect(await signInFrom('127.0.0.1', member.email, member.password)).toBe(302);
    // Nor does the stranger's lockout reach the member's other addresses, or the address's other members.
    const other = await gw.newMember(alice.tenantId);
    expect(await signInFrom('127.0.0.3', member.email, member.password)).toBe(302);
    expect(await signInFrom('127.0.0.2', other.email, other.password)).toBe(302);
    expect(await locks().countDocuments({ memberId: member.id, lockedUntil: { $gt: new Date() } })).toBe(1);
  });

  it('records failed sign-ins that arrive at once from a new address without a store error', async () => {
    const member = await gw.newMember(alice.tenantId);
    // Each failure upserts the address's lock document: the first ones race to insert it.
    const failures = Array.from({ length: 20 }, () => gw.members.recordFailure(member.id, '127.0.0.9', 3, 60_000));
    await expect(Promise.all(failures)).resolves.toHaveLength(20);
    expect(await locks().countDocuments({ memberId: member.id })).toBe(1);
  });

  it('refuses a change without the CSRF token, with another session token, or from another origin', async () => {
    const { id } = await flaggedRecord(alice.key, uniqueName('csrf'));
    const { browser } = await signedInMember(alice.tenantId);
    await browser.get('/console/records');
    const form = { status: 'Compliant', reason: 'fine' };
    const missing = await browser.send('POST', `/console/records/${id}/moderation`, form);
    expect([missing.status, codeOf(missing)]).toEqual([403, 'forbidden']);
    const { browser: other } = await signedInMember(alice.tenantId);
    await other.get('/console/records');
    const crossed = await browser.post(`/console/records/${id}/moderation`, { ...form, _csrf: other.csrf });
    expect(crossed.status).toBe(403);
    // fetch drops the forbidden Origin and Sec-Fetch-* headers: node:http sends them as a browser would.
    const foreign = await browserPost(
      gw.url,
      `/console/records/${id}/moderation`,
      { cookie: browser.cookie, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      { _csrf: browser.csrf, ...form },
    );
    expect(foreign).toBe(403);
    const json = await fetch(`${gw.url}/console/records/${id}/moderation`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: browser.cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ _csrf: browser.csrf, ...form }),
    });
    expect(json.status).toBe(415);
    const record = await gw.request('GET', `/api/v1/records/${id}`, { key: alice.key });
    expect(record.body.data.moderationStatus).toBe('Flagged');
  });
});

describe('reports', () => {
  it('queues trusted flaggers first, then the most reported targets, then the oldest; a member decides there', async () => {
    const tenant = await gw.newTenant();
    await gw.request('PATCH', '/api/v1/settings', {
      key: tenant.key,
      body: { trustedFlaggers: [{ id: 'hotline', name: 'The Hotline' }] },
    });
    const posts = ['lonely', 'busy', 'flagger'];
    for (const clientId of posts) {
      const posted = await gw.request('POST', '/api/v1/moderate', {
        key: tenant.key,
        body: { clientId, name: 'A post', entity: 'post', content: 'a lovely day' },
      });
      expect(posted.status).toBe(200);
    }
    const report = async (clientId: string, reporter: Record<string, string>) => {
      const reply = await gw.request('POST', '/api/v1/reports', {
        key: tenant.key,
        body: {
          target: { type: 'record', clientId },
          reporter,
          category: 'STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH',
          explanation: `about ${clientId}`,
        },
      });
      expect(reply.status).toBe(202);
      return reply.body.data as { id: string; target: { id: string } };
    };
    // Oldest first: the lonely post's report, then two on the busy post, then the trusted flagger's.
    const lonely = await report('lonely', { type: 'user', id: 'r1' });
    const busy1 = await report('busy', { type: 'user', id: 'r2' });
    const busy2 = await report('busy', { type: 'user', id: 'r3' });
    const flagged = await report('flagger', { type: 'trusted_flagger', id: 'hotline' });

    const { browser } = await signedInMember(tenant.tenantId);
    const queue = await browser.get('/console/reports');
    expect(queue.status).toBe(200);
    const order = [...queue.text.matchAll(/data-id="(rpt_\w+)"/g)].map((match) => match[1]);
    expect(order).toEqual([flagged.id, busy1.id, busy2.id, lonely.id]);
    expect(queue.text).toContain('Trusted flagger: The Hotline');
    expect(queue.text).toContain('2 open');

    const recordPage = await browser.get(`/console/records/${busy1.target.id}`);
    expect(recordPage.text).toMatch(/<dt>Open reports<\/dt>\s*<dd>\s*<a href="\/console\/reports">2<\/a>/);

    const blank = await browser.post(`/console/reports/${lonely.id}/decision`, { outcome: 'NoAction', reason: ' ' });
    expect([blank.status, codeOf(blank)]).toEqual([400, 'validation_error']);
    const none = await browser.post(`/console/reports/${lonely.id}/decision`, { outcome: 'NoAction', reason: 'fine' });
    expect(none.status).toBe(302);
    const acted = await browser.post(`/console/reports/${flagged.id}/decision`, {
      outcome: 'Actioned',
      action: 'Flag',
      reason: 'hate speech',
    });
    expect(acted.status).toBe(302);
    const decided = await gw.request('GET', `/api/v1/reports/${flagged.id}`, { key: tenant.key });
    expect(decided.body.data.decision).toMatchObject({ outcome: 'Actioned', action: 'Flag', reason: 'hate speech' });
    const record = await gw.request('GET', `/api/v1/records/${flagged.target.id}`, { key: tenant.key });
    expect(record.body.data).toMatchObject({ moderationStatus: 'Flagged', moderationStatusVia: 'Manual' });
    const after = await browser.get('/console/reports');
    expect([...after.text.matchAll(/data-id="(rpt_\w+)"/g)].map((match) => match[1])).toEqual([busy1.id, busy2.id]);
  });
});

describe('foreign origins', () => {
  const CHANGES = [
    '/console/sign-out',
    '/console/records/rec_x/moderation',
    '/console/users/usr_x/status',
    '/console/appeals/apl_x/decision',
    '/console/reports/rpt_x/decision',
    '/console/settings',
    '/console/rules',
    '/console/deliveries/dlv_x/retry',
    '/console/webhooks/we_x/replay',
  ];

  /** What browsers send from another origin: a sibling subdomain (same site, so SameSite cookies go along), another site, an opaque origin, and an older browser without Sec-Fetch-*. */
  const foreign = (port: string): Array<[string, Record<string, string>]> => [
    [
      'a sibling subdomain',
      {
        origin: `http://evil.localhost:${port}`,
        'sec-fetch-site': 'same-site',
        'sec-fetch-mode': 'navigate',
        'sec-fetch-dest': 'document',
      },
    ],
    [
      'another site',
      {
        origin: 'https://evil.example',
        'sec-fetch-site': 'cross-site',
        'sec-fetch-mode': 'navigate',
        'sec-fetch-dest': 'document',
      },
    ],
    ['an opaque origin', { origin: 'null', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' }],
    ['an opaque origin, no Sec-Fetch-*', { origin: 'null' }],
    ['another site, no Sec-Fetch-*', { origin: 'https://evil.example' }],
    ['a look-alike of our origin', { origin: `http://127.0.0.1:${port}.evil.example` }],
  ];

  it('refuses every state-changing console and appeal page request from a foreign origin with 403, sign-in included', async () => {
    const { port } = new URL(gw.url);
    const member = await gw.newMember(alice.tenantId, 'admin');
    const browser = new Client(gw.url);
    expect((await browser.signIn(member.email, member.password)).status).toBe(302);
    await browser.get('/console/records');
    /** The member's sign-in form, sent with these headers. */
    const signInWith = (headers: Record<string, string>) =>
      browserPost(gw.url, '/console/sign-in', headers, { email: member.email, password: member.password });
    for (const [name, headers] of foreign(port)) {
      const withSession = { ...headers, cookie: browser.cookie };
      for (const path of CHANGES) {
        const status = await browserPost(gw.url, path, withSession, { _csrf: browser.csrf, status: 'Compliant' });
        expect({ name, path, status }).toEqual({ name, path, status: 403 });
      }
      const signIn = await signInWith(headers);
      expect({ name, path: '/console/sign-in', status: signIn }).toEqual({
        name,
        path: '/console/sign-in',
        status: 403,
      });
      const appeal = await browserPost(gw.url, '/appeal', headers, { token: 'x.y', text: 't', confirm: 'yes' });
      expect({ name, path: '/appeal', status: appeal }).toEqual({ name, path: '/appeal', status: 403 });
    }
    // The same requests from our own origin, as a browser sends them, pass the check: with our origin, or with
    // `Origin: null` (what Chromium sends for a page served with Referrer-Policy: no-referrer) from the same origin.
    const own = { origin: new URL(gw.url).origin, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate' };
    for (const headers of [own, { ...own, origin: 'null' }]) {
      const signIn = await signInWith(headers);
      expect(signIn).toBe(302);
    }
    const moderation = await browserPost(
      gw.url,
      '/console/records/rec_x/moderation',
      { ...own, cookie: browser.cookie },
      { _csrf: browser.csrf, status: 'Compliant', reason: 'fine' },
    );
    expect(moderation).toBe(404);
    // So does the origin of PUBLIC_URL (http://localhost:8080 in these tests), as seen behind a proxy.
    const viaPublic = await signInWith({ origin: 'http://localhost:8080' });
    expect(viaPublic).toBe(302);
  });
});

describe('console review', () => {
  it("shows the tenant's flagged records newest first and records the member as the actor of a decision", async () => {
    const older = await flaggedRecord(alice.key, uniqueName('old'));
    const newer = await flaggedRecord(alice.key, uniqueName('new'));
    const { member, browser } = await signedInMember(alice.tenantId);
    const inbox = await browser.get('/console/records');
    expect(inbox.text.indexOf(newer.id)).toBeGreaterThan(-1);
    expect(inbox.text.indexOf(newer.id)).toBeLessThan(inbox.text.indexOf(older.id));
    // Times say that they are UTC, as the date filters do.
    expect(inbox.text).toMatch(/<time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time>/);
    expect(inbox.text).toContain('From (UTC)');

    const page = await browser.get(`/console/records/${newer.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('href="https://cdn.example.com/a.png"');
    expect(page.text).not.toContain('href="javascript:');
    expect(page.text).toContain(PROFANE);

    const decided = await browser.post(`/console/records/${newer.id}/moderation`, {
      status: 'Compliant',
      reason: 'satire',
    });
    expect(decided.status).toBe(302);
    const events = await gw.request('GET', `/api/v1/records/${newer.id}/events`, { key: alice.key });
    const manual = (events.body.data as Array<{ type: string; data: Record<string, unknown> }>).at(-1)!;
    expect(manual.data).toMatchObject({ status: 'Compliant', via: 'Manual', actor: `member:${member.id}` });
  });

  it('answers an unknown console address, or a method a page does not take, with a console page', async () => {
    const { browser } = await signedInMember(alice.tenantId);
    for (const [method, path] of [
      ['GET', '/console/nope'],
      ['GET', '/console/records/rec_x/nope'],
      ['GET', '/console/sign-out'],
    ] as const) {
      const page = await browser.send(method, path);
      expect({ path, status: page.status, code: codeOf(page), type: page.headers.get('content-type') }).toEqual({
        path,
        status: 404,
        code: 'not_found',
        type: 'text/html; charset=utf-8',
      });
    }
  });

  it('makes one decision of a form sent twice (a double click), and another of the next form', async () => {
    const { id } = await flaggedRecord(alice.key, uniqueName('twice'));
    const { browser } = await signedInMember(alice.tenantId);
    const page = await browser.get(`/console/records/${id}`);
    const moderationId = /name="moderationId" value="(mod_\w+)"/.exec(page.text)?.[1];
    expect(moderationId).toBeDefined();
    const form = { status: 'Compliant', reason: 'Looked at it', moderationId: moderationId! };
    const sent = await Promise.all([0, 1, 2].map(() => browser.post(`/console/records/${id}/moderation`, form)));
    expect(sent.map((answer) => answer.status)).toEqual([302, 302, 302]);
    const manualEvents = async () =>
      (
        (await gw.request('GET', `/api/v1/records/${id}/events`, { key: alice.key })).body.data as Array<{
          type: string;
          data: { via?: string };
        }>
      ).filter((event) => event.type === 'RecordModerated' && event.data.via === 'Manual');
    expect(await manualEvents()).toHaveLength(1);
    // The page rendered again gives its form a new id: that decision is recorded too.
    const next = /name="moderationId" value="(mod_\w+)"/.exec((await browser.get(`/console/records/${id}`)).text)?.[1];
    expect(next).not.toBe(moderationId);
    await browser.post(`/console/records/${id}/moderation`, { ...form, moderationId: next! });
    expect(await manualEvents()).toHaveLength(2);
    const forged = await browser.post(`/console/records/${id}/moderation`, { ...form, moderationId: 'mod_x' });
    expect([forged.status, codeOf(forged)]).toEqual([400, 'validation_error']);
  });

  it('refuses an empty reason with 400 validation_error naming the field', async () => {
    const { id } = await flaggedRecord(alice.key, uniqueName('reason'));
    const { browser } = await signedInMember(alice.tenantId);
    await browser.get('/console/records');
    const page = await browser.post(`/console/records/${id}/moderation`, { status: 'Compliant', reason: ' ' });
    expect([page.status, codeOf(page)]).toEqual([400, 'validation_error']);
    expect(page.text).toContain('<code>reason</code>');
  });

  it("answers a deleted record's page with 404 not_found, as an unknown record's, and its user's page without its content", async () => {
    const clientId = uniqueName('gone');
    const { id, user } = await flaggedRecord(alice.key, clientId);
    const { browser } = await signedInMember(alice.tenantId);
    expect((await browser.get(`/console/records/${id}`)).text).toContain(PROFANE);
    const removal = await gw.request('DELETE', '/api/v1/ingest', { key: alice.key, body: { clientId } });
    expect(removal.status).toBe(202);
    await waitFor(async () => (await gw.request('GET', `/api/v1/records/${id}`, { key: alice.key })).status === 404, {
      timeoutMs: 60000,
      what: 'the record to be deleted',
    });
    const page = await browser.get(`/console/records/${id}`);
    expect([page.status, codeOf(page)]).toEqual([404, 'not_found']);
    expect(page.text).not.toContain(PROFANE);
    const userPage = await browser.get(`/console/users/${user}`);
    expect(userPage.status).toBe(200);
    expect(userPage.text).not.toContain(PROFANE);
  });

  it("never shows tenant A's data to a member of tenant B", async () => {
    const { id, user } = await flaggedRecord(alice.key, uniqueName('iso'));
    const { browser } = await signedInMember(bob.tenantId);
    expect((await browser.get(`/console/records/${id}`)).status).toBe(404);
    expect((await browser.get(`/console/users/${user}`)).status).toBe(404);
    expect((await browser.get('/console/records?status=all')).text).not.toContain(id);
    const acted = await browser.post(`/console/users/${user}/status`, { status: 'Banned', reason: 'x' });
    expect(acted.status).toBe(404);
  });

  it("applies a member's role change and removal to the member's next request, signed in already", async () => {
    const { member, browser } = await signedInMember(alice.tenantId, 'admin');
    expect((await browser.get('/console/settings')).status).toBe(200);
    expect(await gw.members.setRole(member.id, 'moderator')).toBe(true);
    expect((await browser.get('/console/settings')).status).toBe(403);
    expect((await browser.get('/console/records')).status).toBe(200);
    expect(await gw.members.removeMember(member.id)).toBe(true);
    const after = await browser.get('/console/records');
    expect(after.status).toBe(302);
  });

  it('saves the editor as a live version or a draft, lists versions, promotes a draft and rolls back', async () => {
    const tenant = await gw.newTenant();
    const { member, browser } = await signedInMember(tenant.tenantId, 'admin');
    const words = (list: string[]) =>
      JSON.stringify({ rules: [{ id: 'w', name: 'Words', strategies: [{ type: 'blocklist', words: list }] }] });
    const page = await browser.get('/console/settings');
    expect(page.text).toContain('No version written yet');
    // The editor holds the live set as `PUT /rules` takes it: saved again unchanged, it is accepted.
    const editor = /<textarea name="rules"[^>]*>\n?([^<]*)<\/textarea>/.exec(page.text)?.[1] ?? '';
    const unchanged = await browser.post('/console/rules', {
      rules: editor.replaceAll('&quot;', '"'),
      as: 'live',
    });
    expect(unchanged.status).toBe(302);
    expect((await browser.post('/console/rules', { rules: words(['otter']), note: 'otters', as: 'live' })).status).toBe(
      302,
    );
    expect((await browser.post('/console/rules', { rules: words(['otter', 'heron']), as: 'draft' })).status).toBe(302);
    const rulesOf = async () =>
      (await gw.request('GET', '/api/v1/rules', { key: tenant.key })).body as { version: number; rules: unknown[] };
    expect((await rulesOf()).version).toBe(2);
    const listed = await browser.get('/console/settings');
    expect(listed.text).toMatch(/class="live-version">v2</);
    expect(listed.text).toContain(`member:${member.id}`);
    expect(listed.text).toContain('otters');
    expect(listed.text).toContain('/console/rules/versions/3/promote');
    expect(listed.text).toContain('/console/rules/versions/1/rollback');
    expect((await browser.post('/console/rules/versions/3/promote', {})).status).toBe(302);
    expect((await rulesOf()).version).toBe(3);
    expect((await browser.post('/console/rules/versions/2/rollback', {})).status).toBe(302);
    const rolledBack = await gw.request('GET', '/api/v1/rules/versions/4', { key: tenant.key });
    expect(rolledBack.body).toMatchObject({ data: { version: 4, live: true, basedOn: 2 } });
    const missing = await browser.post('/console/rules/versions/99/promote', {});
    expect([missing.status, codeOf(missing)]).toEqual([404, 'not_found']);
    const notDraft = await browser.post('/console/rules/versions/2/promote', {});
    expect([notDraft.status, codeOf(notDraft)]).toEqual([409, 'conflict']);
  });

  it('keeps rules, settings and webhooks to admins, with the API validation', async () => {
    const { browser: plain } = await signedInMember(alice.tenantId);
    expect((await plain.get('/console/settings')).status).toBe(403);
    expect((await plain.get('/console/webhooks')).status).toBe(403);
    const { browser } = await signedInMember(alice.tenantId, 'admin');
    const page = await browser.get('/console/settings');
    expect(page.status).toBe(200);
    expect(page.text).toContain('1000 blocklist words');
    // Every strategy type is named, those that read contact details and the text in images too.
    for (const type of [
      'blocklist',
      'patterns',
      'links',
      'pii',
      'openai-moderation',
      'prompt',
      'images',
      'image-text',
    ]) {
      expect(page.text).toContain(`<code>${type}</code>`);
    }
    const overBudget = {
      rules: Array.from({ length: 3 }, (_, r) => ({
        id: `r${r}`,
        name: 'R',
        strategies: [{ type: 'patterns', patterns: Array.from({ length: 200 }, (_, i) => `p${r}x${i}`) }],
      })),
    };
    const refused = await browser.post('/console/rules', { rules: JSON.stringify(overBudget) });
    expect([refused.status, codeOf(refused)]).toEqual([400, 'validation_error']);
    expect(refused.text).toContain('the rule set holds 600 patterns in all; its budget is 500');
    // The editor again, holding what was sent (escaped), so that it can be corrected rather than typed again.
    expect(refused.text).toContain('name="rules"');
    expect(refused.text).toContain('p2x99');
    const bad = await browser.post('/console/rules', { rules: '{"rules": "nope"}' });
    expect([bad.status, codeOf(bad)]).toEqual([400, 'validation_error']);
    const notJson = await browser.post('/console/rules', { rules: '{"rules": [<b>' });
    expect([notJson.status, codeOf(notJson)]).toEqual([400, 'invalid_json']);
    expect(notJson.text).toContain('{&quot;rules&quot;: [&lt;b&gt;</textarea>');
    const repeated = await browser.post('/console/rules', { rules: '{"rules": [], "rules": []}' });
    expect([repeated.status, codeOf(repeated)]).toEqual([400, 'invalid_json']);
    const deep = await browser.post('/console/rules', { rules: `{"rules": ${'['.repeat(5000)}${']'.repeat(5000)}}` });
    expect([deep.status, codeOf(deep)]).toEqual([400, 'invalid_json']);
    expect(deep.text).toContain('the rule set is nested too deeply');
    const lone = '{"rules": [{"id": "a", "name": "x\\ud800", "strategies": [{"type": "blocklist", "words": ["w"]}]}]}';
    const surrogate = await browser.post('/console/rules', { rules: lone });
    expect([surrogate.status, codeOf(surrogate)]).toEqual([400, 'validation_error']);
    expect(surrogate.text).toContain('rules.0.name');
    // As the API: no prompt strategy where no LLM would judge it (it would be stored and never flag).
    const prompt = { rules: [{ id: 'p', name: 'P', strategies: [{ type: 'prompt', topic: 't', prompt: 'Flag t.' }] }] };
    const unjudgeable = await browser.post('/console/rules', { rules: JSON.stringify(prompt) });
    expect([unjudgeable.status, codeOf(unjudgeable)]).toEqual([400, 'prompt_rules_disabled']);
    const kept = await gw.request('GET', '/api/v1/rules', { key: alice.key });
    expect(JSON.stringify(kept.body)).not.toContain('"prompt"');
    const saved = await browser.post('/console/settings', { testMode: 'true', suspensionThreshold: '3' });
    expect(saved.status).toBe(302);
    const settings = await gw.request('GET', '/api/v1/settings', { key: alice.key });
    expect(settings.body).toMatchObject({ testMode: true, suspensionThreshold: 3 });
    await browser.post('/console/settings', { suspensionThreshold: '1' });
    expect((await browser.get('/console/webhooks')).status).toBe(200);
    const endpoint = await gw.request('POST', '/api/v1/webhook-endpoints', {
      key: alice.key,
      body: { url: 'https://hooks.example.com/console' },
    });
    const log = await browser.get(`/console/webhooks/${endpoint.body.data.id}`);
    expect(log.status).toBe(200);
    // Replay re-sends failed deliveries only, and the page says so.
    expect(log.text).toContain('Replay failed deliveries since');
    expect(log.text.replace(/\s+/g, ' ')).toContain('succeeded ones are not sent again');
  });
});

describe('appeals', () => {
  it('refuses NUL and lone surrogates in a form, query or path with 400 naming the field; a CRLF counts as one character', async () => {
    const { id } = await flaggedRecord(alice.key, uniqueName('nul'));
    const { browser } = await signedInMember(alice.tenantId);
    await browser.get('/console/records');
    for (const path of [
      '/console/records/%00',
      '/console/records?entity=%00',
      '/console/users?email=a%00',
      '/console/records?entity=%ED%A0%80',
    ]) {
      const page = await browser.get(path);
      expect({ path, status: page.status, code: codeOf(page) }).toEqual({
        path,
        status: 400,
        code: 'validation_error',
      });
    }
    const nul = await browser.post(`/console/records/${id}/moderation`, { status: 'Compliant', reason: 'bad\0nul' });
    expect([nul.status, codeOf(nul)]).toEqual([400, 'validation_error']);
    expect(nul.text).toContain('<code>reason</code>');
    // 1,999 characters as the browser counts them against the field's maxlength (2,000), sent with CRLF line breaks.
    const reason = Array.from({ length: 100 }, () => 'x'.repeat(19)).join('\r\n');
    const long = await browser.post(`/console/records/${id}/moderation`, { status: 'Compliant', reason });
    expect(long.status).toBe(302);
  });

  it('hands a suspended user a link to appeal once, which a member approves', async () => {
    const userClientId = uniqueName('u');
    const { user } = await flaggedRecord(alice.key, uniqueName('ap'), userClientId);
    // More flagged records than the appeals inbox lists for a user (5): it links to all of them.
    for (let i = 0; i < 5; i += 1) await flaggedRecord(alice.key, uniqueName(`ap${i}`), userClientId);
    const { browser } = await signedInMember(alice.tenantId);
    await browser.get(`/console/users/${user}`);
    // The flagged record suspended the user already; a member reinstates, then suspends with a reason of their own.
    expect(
      (await browser.post(`/console/users/${user}/status`, { status: 'Compliant', reason: 'checking' })).status,
    ).toBe(302);
    expect(
      (await browser.post(`/console/users/${user}/status`, { status: 'Suspended', reason: 'spam wave' })).status,
    ).toBe(302);
    // The same status again changes nothing, and the member is told so rather than shown a seeming success.
    const same = await browser.post(`/console/users/${user}/status`, { status: 'Suspended', reason: 'again' });
    expect(same.location).toBe(`/console/users/${user}?unchanged=1`);
    expect((await browser.get(same.location!)).text).toContain('The user was already Suspended');
    const read = await gw.request('GET', `/api/v1/users/${user}`, { key: alice.key });
    expect(read.body.data.actionStatus).toBe('Suspended');
    const appealUrl = read.body.data.appealUrl as string;
    expect(appealUrl).toMatch(/^http:\/\/localhost:8080\/appeal\?token=[\w-]+\.[\w-]+$/);
    const token = new URL(appealUrl).searchParams.get('token')!;

    const visitor = new Client(gw.url);
    const page = await visitor.get(`/appeal?token=${token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.text).toContain('spam wave');
    const nul = await visitor.send('POST', '/appeal', { token, text: 'I removed\0it', confirm: 'yes' });
    expect([nul.status, codeOf(nul)]).toEqual([400, 'validation_error']);
    // Text that is only spaces: the form again, with what was written and what is wrong.
    const blank = await visitor.send('POST', '/appeal', { token, text: '   ', confirm: 'yes' });
    expect([blank.status, codeOf(blank)]).toEqual([400, 'validation_error']);
    // (A newline right after <textarea> is not part of its content.)
    expect(blank.text).toMatch(/<textarea name="text"[^>]*>\n? {3}<\/textarea>/);
    const sent = await visitor.send('POST', '/appeal', { token, text: 'I removed it', confirm: 'yes' });
    // Post, redirect, get: the page the user lands on has the link, so that a reload works.
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(`/appeal?token=${encodeURIComponent(token)}&sent=1`);
    const again = await visitor.get(`/appeal?token=${token}`);
    expect(again.text).toContain('Your appeal was received');
    expect(again.text).not.toContain('name="text"');

    const inbox = await browser.get('/console/appeals');
    expect(inbox.text).toContain(`href="/console/records?status=Flagged&user=${user}"`);
    const appealId = /action="\/console\/appeals\/(apl_[\w]+)\/decision"/.exec(inbox.text)?.[1];
    expect(inbox.text).toContain('I removed it');
    const decided = await browser.post(`/console/appeals/${appealId}/decision`, {
      decision: 'Approved',
      reason: 'fixed',
    });
    expect(decided.status).toBe(302);
    const after = await gw.request('GET', `/api/v1/users/${user}`, { key: alice.key });
    expect(after.body.data).toMatchObject({ actionStatus: 'Compliant', appealUrl: null });
  });

  it('refuses forged, altered and foreign tokens', async () => {
    const { user } = await flaggedRecord(alice.key, uniqueName('fg'), uniqueName('u'));
    await gw.request('POST', `/api/v1/users/${user}/status`, {
      key: alice.key,
      body: { status: 'Banned', reason: 'x' },
    });
    const read = await gw.request('GET', `/api/v1/users/${user}`, { key: alice.key });
    const token = new URL(read.body.data.appealUrl as string).searchParams.get('token')!;
    const [payload, signature] = token.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const swapped = Buffer.from(JSON.stringify({ ...claims, t: bob.tenantId })).toString('base64url');
    const visitor = new Client(gw.url);
    for (const bad of [`${swapped}.${signature}`, `${payload}.${'A'.repeat(43)}`, 'nonsense', '']) {
      const page = await visitor.get(`/appeal?token=${encodeURIComponent(bad)}`);
      expect([page.status, codeOf(page)]).toEqual([403, 'forbidden']);
    }
    const posted = await visitor.send('POST', '/appeal', {
      token: `${swapped}.${signature}`,
      text: 'x',
      confirm: 'yes',
    });
    expect(posted.status).toBe(403);
    expect((await gw.request('GET', `/api/v1/appeals?user=${user}`, { key: alice.key })).body.data).toEqual([]);
  });
});

describe('payments', () => {
  it("shows the user's payment actions, as the notifier records them, on the user page", async () => {
    const { user } = await flaggedRecord(alice.key, uniqueName('pay'), uniqueName('u'));
    const at = new Date();
    await gw.db.collection<{ _id: string }>(COLLECTIONS.paymentActions).insertOne({
      _id: `pay_${uniqueName('evt')}`,
      tenantId: alice.tenantId,
      userId: user,
      eventId: uniqueName('evt'),
      userVersion: 2,
      action: 'pause',
      state: 'succeeded',
      accountId: 'acct_console1',
      attemptCount: 2,
      attempts: [],
      lastError: 'server_error',
      stripeRequestId: 'req_console1',
      dueAt: at,
      completedAt: at,
      createdAt: at,
      updatedAt: at,
    } as { _id: string });
    const { browser } = await signedInMember(alice.tenantId);
    const page = await browser.get(`/console/users/${user}`);
    expect(page.status).toBe(200);
    const card = page.text.slice(page.text.indexOf('<h2>Payments</h2>'));
    expect(card).toContain('Pause charges');
    expect(card).toContain('acct_console1');
    expect(card).toContain('req_console1');
    // An error that a later attempt overcame is not shown as the outcome.
    expect(card.slice(0, card.indexOf('</tr>', card.indexOf('acct_console1')))).not.toContain('server_error');

    const other = await flaggedRecord(alice.key, uniqueName('pay'), uniqueName('u'));
    expect((await browser.get(`/console/users/${other.user}`)).text).not.toContain('<h2>Payments</h2>');
  });
});
