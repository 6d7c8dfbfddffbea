import { tmpdir } from 'node:os';
import path from 'node:path';
import { recordIdFor } from '@vigil/proto';
import { parse } from 'csv-parse/sync';
import type { Browser, Page } from 'playwright-core';
import { collectErrors, newContext, signIn, startConsoleStack, type ConsoleStack } from './console-support';
import type { Gateway } from './harness';

// The console's transparency report page in a real headless Chromium against the real moderator process, Kafka and
// the MongoDB-wire store: decisions made through the API and one made in the console show in its tables and charts,
// and its CSV matches. Nothing sleeps.
const WAIT = 30_000;

let stack: ConsoleStack;
let gw: Gateway;
let browser: Browser;
let tenant: { tenantId: string; key: string };
let member: { email: string; password: string };

const RULES = { rules: [{ id: 'spam', name: 'Spam', strategies: [{ type: 'patterns', patterns: ['buy now'] }] }] };

const call = async (method: string, path: string, body?: unknown) => {
  const reply = await gw.request(method, `/api/v1${path}`, { key: tenant.key, ...(body ? { body } : {}) });
  if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body as { data?: { id: string } };
};

beforeAll(async () => {
  stack = await startConsoleStack('gwuitr', { TENANT_CONFIG_TTL_MS: '0' });
  ({ gw, browser } = stack);
  tenant = await gw.newTenant();
  member = await gw.newMember(tenant.tenantId, 'moderator');
  await call('PUT', '/rules', RULES);
  for (const clientId of ['a', 'b']) {
    await call('POST', '/moderate', { clientId, name: 'n', entity: 'post', content: 'buy now' });
  }
  await call('POST', '/moderate', { clientId: 'c', name: 'n', entity: 'post', content: 'a lovely day' });
  const report = await call('POST', '/reports', {
    target: { type: 'record', clientId: 'c' },
    reporter: { type: 'user', id: 'reader-1' },
    category: 'STATEMENT_CATEGORY_VIOLENCE',
    explanation: 'a threat',
  });
  await call('POST', `/reports/${report.data!.id}/decision`, {
    outcome: 'Actioned',
    action: 'Flag',
    reason: 'a threat',
  });
}, 120_000);

afterAll(() => stack?.close());

const cells = async (page: Page, selector: string) =>
  (await page.locator(`${selector} td`).allInnerTexts()).map((text) => text.trim());
const bar = (page: Page, chart: string, key: string) =>
  page.locator(`svg.report-chart.${chart} g.bar[data-key="${key}"]`);

describe('the transparency report page in a browser', () => {
  it('shows notices, restrictions, complaints and accuracy with charts, a console decision included, and its CSV', async () => {
    const ctx = await newContext(browser, WAIT);
    const page = await ctx.newPage();
    const errors = collectErrors(page);
    await signIn(page, gw, member);

    await page.click('nav.top a[href="/console/transparency-report"]');
    await page.waitForURL(/\/console\/transparency-report/);
    // Source, received, decided, median time.
    expect((await cells(page, 'table.report-notices tr[data-source="user"]')).slice(0, 3)).toEqual(['Users', '1', '1']);
    expect(await page.locator('table.report-notices tr[data-source="user"] td').nth(3).innerText()).toMatch(/ s$/);
    const violence = bar(page, 'notice-categories', 'STATEMENT_CATEGORY_VIOLENCE');
    expect(await violence.getAttribute('data-value')).toBe('1');
    expect(await violence.locator('rect.part').count()).toBe(1);
    expect(await page.locator('strong.own-total').innerText()).toBe('2');
    expect(await bar(page, 'own-restrictions', 'DECISION_VISIBILITY_CONTENT_DISABLED').getAttribute('data-value')).toBe(
      '2',
    );
    expect(await bar(page, 'automation', 'AUTOMATED_DECISION_FULLY').getAttribute('data-value')).toBe('2');
    // The report's flag was a person's decision.
    expect(await bar(page, 'automation', 'AUTOMATED_DECISION_NOT_AUTOMATED').getAttribute('data-value')).toBe('1');
    expect(await page.locator('section.complaints svg.reversals').count()).toBe(0);
    expect(await page.locator('strong.accuracy').innerText()).toBe('–');

    // A moderator overturns one automated flag on the record's page: a restriction lifted, a review counted.
    await page.goto(`${gw.url}/console/records/${recordIdFor(tenant.tenantId, 'a')}`);
    await page.selectOption('form.decision select[name=status]', 'Compliant');
    await page.fill('form.decision textarea[name=reason]', 'an honest offer');
    await page.click('form.decision button[type=submit]');
    await page.locator('table.history tr.RecordModerated', { hasText: 'an honest offer' }).waitFor();
    await page.goto(`${gw.url}/console/transparency-report`);
    expect(await bar(page, 'reversals', 'by a moderator').getAttribute('data-value')).toBe('1');
    expect(await page.locator('strong.accuracy').innerText()).toBe('0 %');
    // A picture of the page, for a person to look at (not compared).
    await page.screenshot({ path: path.join(tmpdir(), 'vigil-console-transparency.png'), fullPage: true });

    // The CSV link gives the same figures.
    const href = await page.locator('form.filters a.csv').getAttribute('href');
    const csv = await page.request.get(`${gw.url}${href}`);
    expect(csv.headers()['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers()['content-disposition']).toMatch(/^attachment; filename="transparency-report-/);
    const rows = parse<Record<string, string>>(await csv.text(), { columns: true });
    const value = (section: string, measure: string, key: string) =>
      rows.find((row) => row.section === section && row.measure === measure && row.key === key)?.value;
    expect(value('ownInitiative', 'total', '')).toBe('2');
    expect(value('automatedMeans', 'errorRate', '')).toBe('1');

    // Another period: nothing in it.
    await page.fill('form.filters input[name=from]', '2025-01-01');
    await page.fill('form.filters input[name=to]', '2025-07-01');
    await page.click('form.filters button[type=submit]');
    await page.waitForURL(/from=2025-01-01/);
    expect(await page.locator('strong.own-total').innerText()).toBe('0');
    expect(await page.locator('section.own p.no-data').count()).toBe(2);

    // Usable on a phone-width screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${gw.url}/console/transparency-report`);
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(1);

    // A period it does not take is a 400 page with the API's code.
    const refused = await page.goto(`${gw.url}/console/transparency-report?from=2026-03-02&to=2026-03-01`);
    expect(refused?.status()).toBe(400);
    expect(await page.content()).toContain('validation_error');
    // That refusal is the one error the page may show.
    expect(errors).toEqual([`400 ${gw.url}/console/transparency-report?from=2026-03-02&to=2026-03-01`]);
    await ctx.close();
  });
});
