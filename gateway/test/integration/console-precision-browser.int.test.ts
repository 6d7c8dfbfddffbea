import { recordIdFor } from '@vigil/proto';
import type { Browser, Page } from 'playwright-core';
import { waitFor } from '../../../deploy/test-support';
import { collectErrors, newContext, signIn, startConsoleStack, type ConsoleStack } from './console-support';
import type { Gateway } from './harness';

// The console's precision page in a real headless Chromium against the real moderator process, Kafka and the
// MongoDB-wire store: a moderator's decision made in the console shows in the rule's counts and chart. Nothing sleeps.
const WAIT = 30_000;

let stack: ConsoleStack;
let gw: Gateway;
let browser: Browser;
let tenant: { tenantId: string; key: string };
let member: { email: string; password: string };

const RULES = {
  rules: [
    { id: 'spam', name: 'Spam', strategies: [{ type: 'patterns', patterns: ['buy now'] }] },
    { id: 'links', name: 'Links', strategies: [{ type: 'patterns', patterns: ['cheap pills'] }] },
    { id: 'strict', name: 'Strict', shadow: true, strategies: [{ type: 'patterns', patterns: ['buy'] }] },
  ],
};

beforeAll(async () => {
  stack = await startConsoleStack('gwuiprec', { TENANT_CONFIG_TTL_MS: '0' });
  ({ gw, browser } = stack);
  tenant = await gw.newTenant();
  member = await gw.newMember(tenant.tenantId, 'moderator');
  expect((await gw.request('PUT', '/api/v1/rules', { key: tenant.key, body: RULES })).status).toBe(200);
  for (const [index, [clientId, text]] of [
    ['a', 'buy now'],
    ['b', 'buy now'],
    ['c', 'cheap pills'],
  ].entries()) {
    const reply = await gw.request('POST', '/api/v1/moderate', {
      key: tenant.key,
      body: { clientId, name: 'n', entity: 'post', content: text },
    });
    expect(reply.body).toMatchObject({ status: 'Flagged' });
    // The shadow rule judges each record after its moderation (one at a time per tenant): waited for, so none is skipped.
    await waitFor(
      async () => {
        const report = await gw.request('GET', '/api/v1/rules/precision', { key: tenant.key });
        return (report.body as { shadow: Array<{ runs: number }> }).shadow[0]?.runs === index + 1;
      },
      { timeoutMs: WAIT, what: 'the shadow judgement' },
    );
  }
});

afterAll(() => stack?.close());

const cells = async (page: Page, rule: string) =>
  (await page.locator(`table.precision-rules tr[data-rule="${rule}"] td`).allInnerTexts()).map((text) => text.trim());

describe('the precision page in a browser', () => {
  it("shows a console decision in the rule's counts, precision and chart, per rule on request", async () => {
    const ctx = await newContext(browser, WAIT);
    const page = await ctx.newPage();
    const errors = collectErrors(page);
    await signIn(page, gw, member);

    // A moderator overturns one of spam's flags on the record's page.
    await page.goto(`${gw.url}/console/records/${recordIdFor(tenant.tenantId, 'a')}`);
    await page.selectOption('form.decision select[name=status]', 'Compliant');
    await page.fill('form.decision textarea[name=reason]', 'an honest offer');
    await page.click('form.decision button[type=submit]');
    await page.locator('table.history tr.RecordModerated', { hasText: 'an honest offer' }).waitFor();

    await page.click('nav.top a[href="/console/precision"]');
    await page.waitForURL(/\/console\/precision/);
    // Rule, version, flags, reviewed, confirmed, overturned, precision, overturn rate.
    expect((await cells(page, 'spam')).slice(2)).toEqual(['2', '1', '0', '1', '0 %', '100 %']);
    expect((await cells(page, 'links')).slice(2)).toEqual(['1', '0', '0', '0', '–', '–']);
    const today = new Date().toISOString().slice(0, 10);
    const day = page.locator(`svg.precision-chart g.day[data-day="${today}"]`);
    expect(await day.getAttribute('data-flags')).toBe('3');
    expect(await day.getAttribute('data-reviewed')).toBe('1');
    expect(await page.locator('svg.precision-chart circle').count()).toBe(1);
    // The shadow rule judged 3 and would flag the 2 spam ones; it differs from live on the pills, and from the person
    // who cleared record a.
    const shadow = await page.locator('table.precision-shadow tr[data-rule="strict"] td').allInnerTexts();
    expect(shadow.map((text) => text.trim()).slice(2)).toEqual(['3', '2', '2', '1', '0', '1']);

    // One rule at a time.
    await page.selectOption('form.filters select[name=rule]', 'links');
    await page.click('form.filters button[type=submit]');
    await page.waitForURL(/rule=links/);
    expect(await page.locator('table.precision-rules tbody tr').count()).toBe(1);
    expect(await day.getAttribute('data-flags')).toBe('1');
    expect(await page.locator('svg.precision-chart circle').count()).toBe(0);

    // Usable on a phone-width screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${gw.url}/console/precision`);
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(1);

    // A window it does not take is a 400 page with the API's code.
    const refused = await page.goto(`${gw.url}/console/precision?from=2026-03-02&to=2026-03-01`);
    expect(refused?.status()).toBe(400);
    expect(await page.content()).toContain('validation_error');
    // That refusal is the one error the page may show.
    expect(errors).toEqual([`400 ${gw.url}/console/precision?from=2026-03-02&to=2026-03-01`]);
    await ctx.close();
  });

  it("sets the tenant's rule.degraded threshold on the settings page (admins)", async () => {
    const admin = await gw.newMember(tenant.tenantId, 'admin');
    const ctx = await browser.newContext();
    ctx.setDefaultTimeout(WAIT);
    const page = await ctx.newPage();
    await page.goto(`${gw.url}/console/settings`);
    await page.waitForURL(/\/console\/sign-in/);
    await page.fill('input[name=email]', admin.email);
    await page.fill('input[name=password]', admin.password);
    await page.click('button[type=submit]');
    await page.goto(`${gw.url}/console/settings`);
    await page.fill('input[name=ruleDegradedPercent]', '40');
    await page.fill('input[name=ruleDegradedMinReviews]', '5');
    await page.click('form[action="/console/settings"] button[type=submit]');
    await page.waitForURL(/\/console\/settings$/);
    const settings = await gw.request('GET', '/api/v1/settings', { key: tenant.key });
    expect(settings.body).toMatchObject({ ruleDegradedOverturnRate: 0.4, ruleDegradedMinReviews: 5 });
    // Empty: never.
    await page.fill('input[name=ruleDegradedPercent]', '');
    await page.click('form[action="/console/settings"] button[type=submit]');
    await page.waitForURL(/\/console\/settings$/);
    expect((await gw.request('GET', '/api/v1/settings', { key: tenant.key })).body).toMatchObject({
      ruleDegradedOverturnRate: null,
    });
    await ctx.close();
  });
});
