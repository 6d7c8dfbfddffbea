import { DEFAULT_EMAIL_TEMPLATES, userIdFor } from '@vigil/proto';
import {
  grpcAddressOf,
  spawnModerator,
  spawnNotifier,
  uniqueName,
  waitFor,
  type ServiceProcess,
} from '../../../deploy/test-support';
import { startGateway, type Gateway } from './harness';
import { smtpReceiver } from '../../../deploy/test-support/smtp-receiver';

/**
 * User emails through the API, against the real stack: the gateway (in process), the moderator and the notifier (their
 * built processes), Kafka, the store, and a real SMTP server on 127.0.0.1. A tenant sets its templates with
 * `PATCH /settings`, a user's status changes through `POST /users/:id/status`, the notifier sends the email, and the
 * user's log reads back through `GET /users/:id/emails`.
 */

/** The harness gateway's appeal secret: the notifier signs the links the gateway's appeal page accepts. */
const APPEAL_SECRET = 'test-appeal-secret-of-at-least-32-characters';

/** RCPT TO answers 451 (try again later) while this is above 0. */
let temporaryFailures = 0;
const smtp = smtpReceiver(() => {
  if (temporaryFailures <= 0) return false;
  temporaryFailures -= 1;
  return true;
});
const { received } = smtp;

let moderator: ServiceProcess;
let notifier: ServiceProcess;
let gw: Gateway;

beforeAll(async () => {
  const smtpPort = await smtp.listen();
  const stack = { dbName: uniqueName('gwmail'), topicPrefix: `${uniqueName('t')}.` };
  moderator = spawnModerator(stack, { TENANT_CONFIG_TTL_MS: '0' });
  gw = await startGateway({ moderatorAddress: await grpcAddressOf(moderator), ...stack });
  notifier = spawnNotifier(stack, {
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    EMAIL_FROM: 'Trust <no-reply@vigil.test>',
    EMAIL_TIMEOUT_MS: '5000',
    EMAIL_RETRY_SCHEDULE_S: '0.2,0.2,0.2',
    EMAIL_POLL_MS: '100',
    APPEAL_TOKEN_SECRET: APPEAL_SECRET,
    GATEWAY_PUBLIC_URL: gw.url,
  });
  await waitFor(() => notifier.output().includes('notifier ready'), { timeoutMs: 60000, what: 'the notifier' });
});
afterAll(async () => {
  await notifier?.stop();
  await gw?.close();
  await moderator?.stop();
  await smtp.close();
});

const mailTo = (address: string) =>
  received.filter((mail) => (Array.isArray(mail.to) ? mail.to : [mail.to]).some((to) => to?.text === address));

/** A user of the tenant, created by moderating one of their records. */
async function userOf(tenant: { tenantId: string; key: string }, clientId: string, email?: string): Promise<string> {
  const reply = await gw.request('POST', '/api/v1/moderate', {
    key: tenant.key,
    body: {
      clientId: `post-${clientId}`,
      name: 'A post',
      entity: 'post',
      content: 'hello there',
      user: { clientId, username: `name-${clientId}`, ...(email ? { email } : {}) },
    },
  });
  expect(reply.status).toBe(200);
  return userIdFor(tenant.tenantId, clientId);
}

const setStatus = (key: string, userId: string, status: string) =>
  gw.request('POST', `/api/v1/users/${userId}/status`, { key, body: { status, reason: 'by hand' } });

interface LoggedEmail {
  id: string;
  kind: string;
  status: string;
  skipReason: string | null;
  attemptCount: number;
  sentAt: string | null;
}

/** The user's email log once it has `count` entries in a final state. */
async function emailLog(key: string, userId: string, count: number, query = ''): Promise<LoggedEmail[]> {
  return waitFor(
    async () => {
      const reply = await gw.request('GET', `/api/v1/users/${userId}/emails${query}`, { key });
      expect(reply.status).toBe(200);
      const data = reply.body.data as LoggedEmail[];
      return data.length === count && data.every((e) => ['sent', 'skipped', 'failed'].includes(e.status))
        ? data
        : undefined;
    },
    { timeoutMs: 60000, what: `${count} emails logged` },
  );
}

describe('user emails through the API', () => {
  it('stores the email settings per tenant: templates, null back to the default, unknown placeholders refused', async () => {
    const tenant = await gw.newTenant();
    const suspended = { subject: 'On hold at {{platformName}}', heading: 'On hold', body: 'Hello {{username}}.' };
    const banned = { subject: 'Banned', heading: 'Banned', body: 'Bye {{name}}.' };
    const patched = await gw.request('PATCH', '/api/v1/settings', {
      key: tenant.key,
      body: { emails: { enabled: true, templates: { Suspended: suspended, Banned: banned } } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.emails).toEqual({ enabled: true, templates: { Suspended: suspended, Banned: banned } });

    await gw.request('PATCH', '/api/v1/settings', {
      key: tenant.key,
      body: { emails: { templates: { Banned: null } } },
    });
    const read = await gw.request('GET', '/api/v1/settings', { key: tenant.key });
    expect(read.body.emails).toEqual({ enabled: true, templates: { Suspended: suspended } });
    const other = await gw.newTenant();
    expect((await gw.request('GET', '/api/v1/settings', { key: other.key })).body.emails).toEqual({
      enabled: false,
      templates: {},
    });

    const refused = await gw.request('PATCH', '/api/v1/settings', {
      key: tenant.key,
      body: { emails: { templates: { Compliant: { subject: 'Hi {{email}}', heading: 'x', body: 'y' } } } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('validation_error');
    expect((refused.body.error.details as Array<{ path: unknown[] }>).map((d) => d.path.join('.'))).toEqual([
      'emails.templates.Compliant.subject',
    ]);
    expect((await gw.request('GET', '/api/v1/settings', { key: tenant.key })).body).toEqual(read.body);
  });

  it('emails a user suspended through the API with the tenant template and an appeal link, logs it, then reinstated', async () => {
    const tenant = await gw.newTenant();
    await gw.request('PATCH', '/api/v1/settings', {
      key: tenant.key,
      body: {
        emails: {
          enabled: true,
          templates: { Suspended: { subject: 'On hold, {{username}}', heading: 'On hold', body: 'Sorry.' } },
        },
      },
    });
    const address = `${uniqueName('ann')}@example.com`;
    const userId = await userOf(tenant, 'u-ann', address);
    temporaryFailures = 1;
    expect((await setStatus(tenant.key, userId, 'Suspended')).status).toBe(200);

    const [suspendedLog] = await emailLog(tenant.key, userId, 1);
    expect(suspendedLog).toMatchObject({ kind: 'Suspended', status: 'sent', skipReason: null, attemptCount: 2 });
    expect(suspendedLog!.id).toMatch(/^eml_/);
    expect(Date.parse(suspendedLog!.sentAt ?? '')).not.toBeNaN();
    const [mail] = mailTo(address);
    expect(mail?.subject).toBe('On hold, name-u-ann');
    // The link in the email opens the gateway's appeal page for this user.
    const link = new RegExp(`${gw.url}/appeal\\?token=[\\w.-]+`).exec(mail?.text ?? '')?.[0];
    expect(link).toBeDefined();
    const page = await fetch(link!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('id="status">Suspended<');

    expect((await setStatus(tenant.key, userId, 'Compliant')).status).toBe(200);
    const log = await emailLog(tenant.key, userId, 2);
    expect(log.map((e) => [e.kind, e.status])).toEqual([
      ['Compliant', 'sent'],
      ['Suspended', 'sent'],
    ]);
    // Compliant has no template of the tenant's: the default one, with the tenant's name.
    const name = (await gw.tenants.findTenant(tenant.tenantId))?.name ?? '';
    expect(mailTo(address).map((m) => m.subject)).toEqual([
      'On hold, name-u-ann',
      DEFAULT_EMAIL_TEMPLATES.Compliant.subject.replace('{{platformName}}', name),
    ]);
    // Newest first, paged; never the address or the content.
    const page1 = await gw.request('GET', `/api/v1/users/${userId}/emails?limit=1`, { key: tenant.key });
    expect(page1.body).toEqual({ data: [log[0]], has_more: true });
    expect(JSON.stringify(page1.body)).not.toContain(address);
    expect(JSON.stringify(log)).not.toContain('On hold');
  });

  it('logs the email of a user without an address as skipped', async () => {
    const tenant = await gw.newTenant();
    await gw.request('PATCH', '/api/v1/settings', { key: tenant.key, body: { emails: { enabled: true } } });
    const userId = await userOf(tenant, 'u-none');
    await setStatus(tenant.key, userId, 'Banned');
    expect(await emailLog(tenant.key, userId, 1)).toEqual([
      expect.objectContaining({ kind: 'Banned', status: 'skipped', skipReason: 'no_email', attemptCount: 0 }),
    ]);
  });

  it("pages a user's email log both ways with starting_after and ending_before, refusing another log's cursor", async () => {
    const tenant = await gw.newTenant();
    await gw.request('PATCH', '/api/v1/settings', { key: tenant.key, body: { emails: { enabled: true } } });
    const userId = await userOf(tenant, 'u-paged');
    const otherUser = await userOf(tenant, 'u-elsewhere');
    for (const status of ['Suspended', 'Compliant', 'Suspended', 'Compliant']) {
      expect((await setStatus(tenant.key, userId, status)).status).toBe(200);
    }
    expect((await setStatus(tenant.key, otherUser, 'Banned')).status).toBe(200);
    const ids = (await emailLog(tenant.key, userId, 4)).map((email) => email.id);
    const [elsewhere] = await emailLog(tenant.key, otherUser, 1);
    const page = async (query: string) => {
      const reply = await gw.request('GET', `/api/v1/users/${userId}/emails?${query}`, { key: tenant.key });
      expect(reply.status).toBe(200);
      return { ids: (reply.body.data as LoggedEmail[]).map((email) => email.id), hasMore: reply.body.has_more };
    };

    // One at a time to the oldest, then back to the newest: every entry once, in order.
    const walked: string[] = [];
    let next = await page('limit=1');
    walked.push(...next.ids);
    while (next.hasMore && walked.length <= ids.length) {
      next = await page(`limit=1&starting_after=${next.ids[0]}`);
      walked.push(...next.ids);
    }
    expect(walked).toEqual(ids);
    expect(await page(`limit=2&starting_after=${ids[0]}`)).toEqual({ ids: ids.slice(1, 3), hasMore: true });
    expect(await page(`limit=2&ending_before=${ids[3]}`)).toEqual({ ids: ids.slice(1, 3), hasMore: true });
    expect(await page(`limit=2&ending_before=${ids[1]}`)).toEqual({ ids: ids.slice(0, 1), hasMore: false });

    for (const cursor of ['eml_nope', elsewhere!.id]) {
      for (const param of ['starting_after', 'ending_before']) {
        const refused = await gw.request('GET', `/api/v1/users/${userId}/emails?${param}=${cursor}`, {
          key: tenant.key,
        });
        expect(refused.status).toBe(400);
        expect(refused.body.error).toMatchObject({
          code: 'validation_error',
          message: `invalid ${param} cursor`,
          details: [{ path: [param] }],
        });
      }
    }
  });

  it("answers 404 for another tenant's user and 400 for a limit out of bounds", async () => {
    const tenant = await gw.newTenant();
    const other = await gw.newTenant();
    const userId = await userOf(tenant, 'u-x');
    const foreign = await gw.request('GET', `/api/v1/users/${userId}/emails`, { key: other.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    for (const limit of ['0', '101', 'x']) {
      const bad = await gw.request('GET', `/api/v1/users/${userId}/emails?limit=${limit}`, { key: tenant.key });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('validation_error');
    }
    expect(await gw.request('GET', `/api/v1/users/${userId}/emails`, { key: tenant.key })).toMatchObject({
      status: 200,
      body: { data: [], has_more: false },
    });
  });
});
