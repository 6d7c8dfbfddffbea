import { COLLECTIONS } from '@vigil/proto';
import type { Page } from 'playwright-core';
import type { Receiver } from '../../../deploy/e2e/support';
import { uniqueName, waitFor } from '../../../deploy/test-support';
import { expiryDays, signIn, startMailingStack, type MailingStack, type ReceivedHook } from './console-support';
import type { Gateway } from './harness';
import { reportNewPost } from './api-support';

// Reporters told of outcomes, and their complaints about decisions not to act (Art. 16(5), 20 DSA), against the real
// stack: the gateway in process, the moderator and the notifier as processes, Kafka and the MongoDB-wire store, a
// webhook receiver and an SMTP server on 127.0.0.1, and the complaint page and the console in a real headless
// Chromium. Nothing sleeps.
const WAIT = 60_000;
const APPEAL_SECRET = 'test-appeal-secret-of-at-least-32-characters';
const DAY_MS = 86_400_000;

let stack: MailingStack;
let gw: Gateway;
let receiver: Receiver;
let alice: { tenantId: string; key: string };

beforeAll(async () => {
  stack = await startMailingStack({ name: 'gwcmp', appealSecret: APPEAL_SECRET, readyMs: WAIT });
  ({ gw, receiver } = stack);
  alice = await gw.newTenant();
  const endpoint = await gw.request('POST', '/api/v1/webhook-endpoints', {
    key: alice.key,
    body: { url: receiver.url, events: ['report.decided', 'report.complaint_decided'] },
  });
  expect(endpoint.status).toBe(201);
  const settings = await gw.request('PATCH', '/api/v1/settings', {
    key: alice.key,
    body: { emails: { enabled: true } },
  });
  expect(settings.status).toBe(200);
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

type Webhook = ReceivedHook & {
  payload: {
    id: string;
    outcome: string;
    complaint?: { id: string; decisionId: string | null };
    statement?: Record<string, unknown>;
  };
};
const webhookFor = (event: string, reportId: string) => stack.webhookFor<Webhook>(event, reportId);
const mailTo = (address: string, subject: string) => stack.mailTo(address, subject);

/** A fresh record of alice's, reported by an end user with an address, and the report decided with no action. */
async function reportedAndLeft(email: string | undefined, reporterId = uniqueName('reader')) {
  const { posted, report } = await reportNewPost(gw, alice, {
    reporter: { type: 'user', id: reporterId, ...(email ? { email } : {}) },
    category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
    explanation: 'a fake shop selling counterfeit shoes',
  });
  expect(posted.status).toBe(200);
  expect(report.status).toBe(202);
  const reportId = report.body.data.id as string;
  const decided = await gw.request('POST', `/api/v1/reports/${reportId}/decision`, {
    key: alice.key,
    body: { outcome: 'NoAction', reason: 'the shop is genuine' },
  });
  expect(decided.status).toBe(200);
  return { recordId: posted.body.id as string, reportId };
}

/** An admin of alice's signed in on the reports page. */
async function signInAdmin(page: Page): Promise<void> {
  const admin = await gw.newMember(alice.tenantId, 'admin');
  await signIn(page, gw, admin, { from: '/console/reports', landing: /\/console\/reports/ });
}

describe('the outcome of a report, told to its reporter', () => {
  it('emails a decision not to act with a signed complaint link that lives as long as the complaint window', async () => {
    const email = `${uniqueName('r')}@example.com`;
    const { reportId } = await reportedAndLeft(email);
    const mail = await mailTo(email, 'Your report to');
    expect(mail.text).toContain(`Report: ${reportId}.`);
    expect(mail.text).toContain('Decision: no action was taken.');
    expect(mail.text).toContain('Reason: the shop is genuine');
    expect(mail.text).toMatch(/complain about this decision until \d{4}-\d{2}-\d{2} \(183 days\)/);
    const token = /\/complaint\?token=([A-Za-z0-9_.-]+)/.exec(mail.text ?? '')?.[1];
    expect(expiryDays(token)).toBeGreaterThan(182);
    expect(mail.html).toContain('Complain about this decision');

    const hook = await webhookFor('report.decided', reportId);
    expect(hook.payload.outcome).toBe('NoAction');
    expect(JSON.stringify(hook)).not.toContain(email);

    const read = await gw.request('GET', `/api/v1/reports/${reportId}`, { key: alice.key });
    expect(read.body.data.complaintUrl).toContain('/complaint?token=');
    const openUntil = Date.parse(read.body.data.complaintOpenUntil as string);
    expect((openUntil - Date.parse(read.body.data.decision.decidedAt as string)) / DAY_MS).toBe(183);
    const listed = await gw.request('GET', `/api/v1/reports?target=${read.body.data.target.id}`, { key: alice.key });
    expect(listed.body.data[0]).toMatchObject({ complaintUrl: null, reporter: { email: null } });
  });

  it('emails an action taken without a complaint link, and nothing to a reporter without an address', async () => {
    const email = `${uniqueName('r')}@example.com`;
    const { report } = await reportNewPost(gw, alice, {
      reporter: { type: 'user', id: uniqueName('reader'), email },
      category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
      explanation: 'a fake shop',
    });
    await gw.request('POST', `/api/v1/reports/${report.body.data.id}/decision`, {
      key: alice.key,
      body: { outcome: 'Actioned', action: 'Flag', reason: 'counterfeits' },
    });
    const mail = await mailTo(email, 'Your report to');
    expect(mail.text).toContain('Decision: the reported content was restricted.');
    expect(mail.text).not.toContain('/complaint?token=');

    const silent = await reportedAndLeft(undefined);
    await webhookFor('report.decided', silent.reportId);
    const planned = await gw.db.collection(COLLECTIONS.emailMessages).countDocuments({ reportId: silent.reportId });
    expect(planned).toBe(0);
  });

  it("keeps a reporter's address only as long as the tenant configures", async () => {
    const patched = await gw.request('PATCH', '/api/v1/settings', {
      key: alice.key,
      body: { reporterEmailRetentionDays: 2 },
    });
    expect(patched.body.reporterEmailRetentionDays).toBe(2);
    const refused = await gw.request('PATCH', '/api/v1/settings', {
      key: alice.key,
      body: { reporterEmailRetentionDays: 0 },
    });
    expect(refused.status).toBe(400);

    const email = `${uniqueName('r')}@example.com`;
    const { report } = await reportNewPost(gw, alice, {
      reporter: { type: 'user', id: uniqueName('reader'), email },
      category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
      explanation: 'a fake shop',
    });
    const reportId = report.body.data.id as string;
    const contacts = gw.db.collection<{ _id: string; expiresAt: Date; eraseDay: string }>(COLLECTIONS.reportContacts);
    const contact = await contacts.findOne({ _id: reportId });
    expect((contact!.expiresAt.getTime() - Date.now()) / DAY_MS).toBeCloseTo(2, 1);
    // Erased by the daily erasure on the first day after it runs out: an equality the store serves from an index.
    expect(contact!.eraseDay).toBe(new Date(contact!.expiresAt.getTime() + DAY_MS).toISOString().slice(0, 10));

    // Past the retention nothing uses the address, even before the erasure ran.
    await contacts.updateOne({ _id: reportId }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    const read = await gw.request('GET', `/api/v1/reports/${reportId}`, { key: alice.key });
    expect(read.body.data.reporter).toMatchObject({ hasEmail: true, email: null });
    await gw.request('POST', `/api/v1/reports/${reportId}/decision`, {
      key: alice.key,
      body: { outcome: 'NoAction', reason: 'fine' },
    });
    const skipped = await waitFor(
      () =>
        gw.db
          .collection<{ state: string; skipReason?: string }>(COLLECTIONS.emailMessages)
          .findOne({ reportId, state: 'skipped' }),
      { timeoutMs: WAIT, what: 'the skipped email' },
    );
    expect(skipped.skipReason).toBe('no_email');
    expect(stack.smtp.received.some((mail) => mail.text?.includes(reportId))).toBe(false);
    await gw.request('PATCH', '/api/v1/settings', { key: alice.key, body: { reporterEmailRetentionDays: 213 } });
  });
});

describe('complaints about a decision not to act (Art. 20)', () => {
  it('refuses complaints with a clear 4xx: unknown report, still open, acted on, twice, after the window', async () => {
    const complain = (reportId: string, text = 'please look again') =>
      gw.request('POST', `/api/v1/reports/${reportId}/complaint`, { key: alice.key, body: { text } });

    expect((await complain('rpt_unknown')).status).toBe(404);
    const bounded = await complain('rpt_unknown', 'x'.repeat(1001));
    expect(bounded.status).toBe(400);
    expect(bounded.body.error.code).toBe('validation_error');

    const { report: open } = await reportNewPost(gw, alice, {
      reporter: { type: 'user', id: uniqueName('reader') },
      category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
      explanation: 'a fake shop',
    });
    const notDecided = await complain(open.body.data.id as string);
    expect([notDecided.status, notDecided.body.error.code]).toEqual([409, 'report_not_decided']);

    await gw.request('POST', `/api/v1/reports/${open.body.data.id}/decision`, {
      key: alice.key,
      body: { outcome: 'Actioned', action: 'Flag', reason: 'counterfeits' },
    });
    const actioned = await complain(open.body.data.id as string);
    expect([actioned.status, actioned.body.error.code]).toEqual([409, 'report_actioned']);

    const { reportId } = await reportedAndLeft(undefined);
    const filed = await complain(reportId);
    expect(filed.status).toBe(201);
    expect(filed.body.data.complaint).toMatchObject({ id: expect.stringMatching(/^cmp_/), status: 'Open' });
    const twice = await complain(reportId);
    expect([twice.status, twice.body.error.code]).toEqual([409, 'complaint_exists']);

    // A decision taken 184 days ago (backdated in the store) can no longer be complained about.
    const late = await reportedAndLeft(undefined);
    const reports = gw.db.collection<{ _id: string }>(COLLECTIONS.reports);
    await reports.updateOne(
      { _id: late.reportId },
      { $set: { 'decision.decidedAt': new Date(Date.now() - 184 * DAY_MS) } },
    );
    const closed = await complain(late.reportId);
    expect([closed.status, closed.body.error.code]).toEqual([409, 'complaint_window_closed']);
    // A tenant that keeps complaints open longer (appealWindowDays raised to 200) takes it.
    await gw.request('PATCH', '/api/v1/settings', { key: alice.key, body: { appealWindowDays: 200 } });
    const longer = await complain(late.reportId);
    await gw.request('PATCH', '/api/v1/settings', { key: alice.key, body: { appealWindowDays: 183 } });
    expect(longer.status).toBe(201);

    const openapi = await gw.request('GET', '/openapi.json');
    const responses = openapi.body.paths['/api/v1/reports/{id}/complaint'].post.responses;
    expect(responses['409'].description).toContain('complaint_window_closed');
    expect(responses['404'].description).toContain('not_found');
  });

  it('takes a complaint through the API, upholds it by flagging the record, and tells the reporter', async () => {
    const email = `${uniqueName('r')}@example.com`;
    const { recordId, reportId } = await reportedAndLeft(email);
    const filed = await gw.request('POST', `/api/v1/reports/${reportId}/complaint`, {
      key: alice.key,
      body: { text: 'the shoes are fakes, look at the logo' },
    });
    expect(filed.status).toBe(201);
    const queue = await gw.request('GET', '/api/v1/reports?complaint=Open', { key: alice.key });
    expect((queue.body.data as Array<{ id: string }>).map((r) => r.id)).toContain(reportId);

    const missingAction = await gw.request('POST', `/api/v1/reports/${reportId}/complaint/decision`, {
      key: alice.key,
      body: { outcome: 'Upheld', reason: 'fakes' },
    });
    expect(missingAction.status).toBe(400);
    const upheld = await gw.request('POST', `/api/v1/reports/${reportId}/complaint/decision`, {
      key: alice.key,
      body: { outcome: 'Upheld', action: 'Flag', reason: 'the logo is fake' },
    });
    expect(upheld.status).toBe(200);
    expect(upheld.body.data.complaint).toMatchObject({
      status: 'Upheld',
      action: 'Flag',
      decisionId: expect.stringMatching(/^mod_/),
    });
    const again = await gw.request('POST', `/api/v1/reports/${reportId}/complaint/decision`, {
      key: alice.key,
      body: { outcome: 'Rejected', reason: 'changed my mind' },
    });
    expect([again.status, again.body.error.code]).toEqual([409, 'conflict']);

    const record = await gw.request('GET', `/api/v1/records/${recordId}`, { key: alice.key });
    expect(record.body.data.moderationStatus).toBe('Flagged');
    const restriction = await gw.request('GET', `/api/v1/records/${recordId}/statements`, { key: alice.key });
    expect(restriction.body.data).toEqual([
      expect.objectContaining({ kind: 'restriction', reportId, source: 'SOURCE_TYPE_OTHER_NOTIFICATION' }),
    ]);
    const statements = await gw.request('GET', `/api/v1/reports/${reportId}/statements`, { key: alice.key });
    expect(statements.body.data).toEqual([
      expect.objectContaining({
        kind: 'complaint',
        reportId,
        decisionId: filed.body.data.complaint.id,
        complaint: {
          id: filed.body.data.complaint.id,
          outcome: 'Upheld',
          actionDecisionId: upheld.body.data.complaint.decisionId,
        },
        restriction: { visibility: ['DECISION_VISIBILITY_CONTENT_DISABLED'], endDate: null },
        automatedDecision: 'AUTOMATED_DECISION_NOT_AUTOMATED',
      }),
    ]);

    const hook = await webhookFor('report.complaint_decided', reportId);
    expect(hook.payload).toMatchObject({
      outcome: 'Upheld',
      complaint: { id: filed.body.data.complaint.id },
      statement: { kind: 'complaint', id: statements.body.data[0].id },
    });
    const mail = await mailTo(email, 'Your complaint to');
    expect(mail.text).toContain('Statement of reasons');
    expect(mail.text).toContain('The complaint was upheld by a moderator, and the content was disabled');
    for (const text of [gw.logText(), stack.moderator.output(), stack.notifier.output()]) {
      expect(text).not.toContain(email);
      expect(text).not.toContain('look at the logo');
    }
  });

  it('takes a complaint on the page the outcome email links to, and a moderator rejects it in the console queue', async () => {
    const email = `${uniqueName('r')}@example.com`;
    const { reportId } = await reportedAndLeft(email);
    const outcome = await mailTo(email, 'Your report to');
    const link = /(https?:\/\/\S+\/complaint\?token=[A-Za-z0-9_.-]+)/.exec(outcome.text ?? '')?.[1];
    expect(link).toBeDefined();

    const reporterCtx = await stack.newContext();
    const page = await reporterCtx.newPage();
    await page.goto(link!);
    expect(await page.locator('#outcome').innerText()).toBe('No action');
    expect(await page.locator('#window').innerText()).toMatch(/until \d{4}-\d{2}-\d{2}\s+\(183 days after it\)/);
    await page.fill('#complaint-form textarea[name=text]', 'they sell fakes, I bought one');
    await page.click('#complaint-form button[type=submit]');
    await page.waitForURL(/sent=1/);
    expect(await page.locator('[role=status]').innerText()).toContain('your complaint was sent');
    expect(await page.locator('#complaint-status').innerText()).toBe('Open');
    // The form is gone: one complaint per decision.
    expect(await page.locator('#complaint-form').count()).toBe(0);
    // A user's appeal link does not open the complaint page, nor the other way round.
    const forged = await page.goto(`${gw.url}/appeal?token=${new URL(link!).searchParams.get('token')}`);
    expect(forged?.status()).toBe(403);
    await reporterCtx.close();

    const moderatorCtx = await stack.newContext();
    const consolePage = await moderatorCtx.newPage();
    await signInAdmin(consolePage);
    const card = consolePage.locator(`#complaints article[data-id="${reportId}"]`);
    expect(await card.locator('.complaint-text').innerText()).toBe('they sell fakes, I bought one');
    await card.locator('textarea[name=reason]').fill('the seller proved the shoes are genuine');
    await card.locator('button[value=Rejected]').click();
    await consolePage.waitForURL(/\/console\/reports$/);
    expect(await consolePage.locator(`#complaints article[data-id="${reportId}"]`).count()).toBe(0);
    await moderatorCtx.close();

    const read = await gw.request('GET', `/api/v1/reports/${reportId}`, { key: alice.key });
    expect(read.body.data.complaint).toMatchObject({ status: 'Rejected', action: null, decisionId: null });
    const statements = await gw.request('GET', `/api/v1/reports/${reportId}/statements`, { key: alice.key });
    expect(statements.body.data).toEqual([
      expect.objectContaining({
        kind: 'complaint',
        complaint: expect.objectContaining({ outcome: 'Rejected' }),
        restriction: { endDate: null },
        facts: expect.stringContaining('the seller proved the shoes are genuine'),
      }),
    ]);
    // It restricts nothing, so it names no ground or policy (docs/dsa.md), in the API and in the webhook.
    for (const field of ['ground', 'legalGround', 'policy']) expect(statements.body.data[0]).not.toHaveProperty(field);
    const hook = await webhookFor('report.complaint_decided', reportId);
    expect(hook.payload).toMatchObject({ outcome: 'Rejected', statement: { kind: 'complaint' } });
    for (const field of ['ground', 'legalGround', 'policy']) expect(hook.payload.statement).not.toHaveProperty(field);
    const mail = await mailTo(email, 'Your complaint to');
    expect(mail.text).toContain('was rejected by a moderator');
    expect(mail.text).not.toContain('Ground:');

    // The reporter's page now shows the outcome, in the browser.
    const laterCtx = await stack.newContext();
    const later = await laterCtx.newPage();
    await later.goto(link!);
    expect(await later.locator('#complaint-status').innerText()).toBe('Rejected');
    await laterCtx.close();
  });
});
