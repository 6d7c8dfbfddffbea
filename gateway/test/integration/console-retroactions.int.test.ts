import type { Browser, Page } from 'playwright-core';
import { recordIdFor } from '@vigil/proto';
import { waitFor } from '../../../deploy/test-support';
import { collectErrors, newContext, signIn, startConsoleStack, type ConsoleStack } from './console-support';
import type { Gateway } from './harness';

// The retroaction's confirm view (the backtest's predicted effect, then progress and cancel) and the shadow version's
// toggle and counters, in a real headless Chromium against the real moderator (built dist), Kafka and the MongoDB-wire
// store. Retroactions apply 4 records a second and read a cancel every 20, so that one is
// cancelled half-way. Nothing sleeps.
const WAIT = 45_000;

let stack: ConsoleStack;
let gw: Gateway;
let browser: Browser;

beforeAll(async () => {
  stack = await startConsoleStack('gwuira', { RETROACTION_RATE_PER_S: '4' });
  ({ gw, browser } = stack);
});
afterAll(() => stack?.close());

const words = (list: string[]) => ({
  rules: [{ id: 'animals', name: 'Animals', strategies: [{ type: 'blocklist', words: list }] }],
});

async function signedIn(tenantId: string): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  const admin = await gw.newMember(tenantId, 'admin');
  const ctx = await newContext(browser, WAIT);
  const page = await ctx.newPage();
  const errors = collectErrors(page);
  await signIn(page, gw, admin, { from: '/console/settings', landing: /\/console\// });
  return { page, errors, close: () => ctx.close() };
}

/** Reloads the page until `selector` reads `want` (a job's status), failing on any status outside `passing`. */
const reloadUntil = (page: Page, selector: string, want: string, passing: string[]) =>
  waitFor(
    async () => {
      const status = await page.locator(selector).innerText();
      if (status === want) return true;
      expect(passing).toContain(status);
      await page.reload();
      return undefined;
    },
    { timeoutMs: WAIT, what: `${selector} to read ${want}` },
  );

it('shows a backtest’s predicted effect before the confirm button, then the retroaction’s progress and cancel', async () => {
  const tenant = await gw.newTenant();
  const api = (method: string, path: string, body?: unknown) =>
    gw.request(method, `/api/v1${path}`, { key: tenant.key, ...(body === undefined ? {} : { body }) });
  expect((await api('PUT', '/rules', words(['otter']))).status).toBe(200);
  for (let i = 0; i < 30; i += 1) {
    const reply = await api('POST', '/moderate', { clientId: `h${i}`, name: 'n', entity: 'post', content: 'a heron' });
    expect(reply.status).toBe(200);
  }
  const draft = await api('POST', '/rules/versions', words(['otter', 'heron']));
  expect(draft.status).toBe(201);
  const version = (draft.body as { data: { version: number } }).data.version;

  const { page, errors, close } = await signedIn(tenant.tenantId);
  await page.goto(`${gw.url}/console/settings`);
  await page.locator(`tr.version[data-version="${version}"] button`, { hasText: 'Backtest this draft' }).click();
  await page.waitForURL(/\/console\/backtests\/bt_/);
  const backtestUrl = page.url();
  await reloadUntil(page, '.backtest-status', 'succeeded', ['queued', 'running']);
  // A draft is not applied: promote it first.
  expect(await page.locator('.card.apply').innerText()).toContain(`Promote v${version}`);
  expect(await page.locator('button.confirm-apply').count()).toBe(0);

  expect((await api('POST', `/rules/versions/${version}/promote`)).status).toBe(200);
  await page.reload();
  // The predicted effect, then the confirm button.
  expect(await page.locator('.to-flagged').innerText()).toContain('30');
  expect(await page.locator('.apply-effect').innerText()).toContain('30 would become Flagged');
  await page.locator('button.confirm-apply').click();
  await page.waitForURL(/\/console\/retroactions\/ra_/);
  await page.locator('button.cancel-retroaction').click();
  await page.waitForURL(/\/console\/retroactions\/ra_/);
  await reloadUntil(page, '.retroaction-status', 'cancelled', ['queued', 'running']);
  const stopped = Number(await page.locator('.done-to-flagged').innerText());
  expect(stopped).toBe(20);

  // Applied again from the backtest: it runs to the end, and its progress shows every record.
  await page.goto(backtestUrl);
  await page.locator('button.confirm-apply').click();
  await page.waitForURL(/\/console\/retroactions\/ra_/);
  await reloadUntil(page, '.retroaction-status', 'succeeded', ['queued', 'running']);
  expect(await page.locator('.retroaction-progress').innerText()).toBe('30 of 30');
  expect(Number(await page.locator('.done-to-flagged').innerText())).toBe(30 - stopped);
  const heron = await api('GET', `/records/${recordIdFor(tenant.tenantId, 'h29')}`);
  expect(heron.body.data).toMatchObject({ moderationStatus: 'Flagged' });
  expect(errors).toEqual([]);
  await close();
}, 120_000);

it('runs a draft in shadow from the rules page and shows its counters', async () => {
  const tenant = await gw.newTenant();
  const api = (method: string, path: string, body?: unknown) =>
    gw.request(method, `/api/v1${path}`, { key: tenant.key, ...(body === undefined ? {} : { body }) });
  expect((await api('PUT', '/rules', words(['otter']))).status).toBe(200);
  const draft = await api('POST', '/rules/versions', words(['otter', 'heron']));
  const version = (draft.body as { data: { version: number } }).data.version;

  const { page, errors, close } = await signedIn(tenant.tenantId);
  await page.goto(`${gw.url}/console/settings`);
  const row = page.locator(`tr.version[data-version="${version}"]`);
  await row.locator('button.shadow-toggle', { hasText: 'Run in shadow' }).click();
  await page.waitForURL(/\/console\/settings/);
  expect(await row.locator('.shadow-mark').innerText()).toBe('shadow');
  expect(await page.locator('.shadow-version h2').innerText()).toBe(`Shadow version v${version}`);

  const reply = await api('POST', '/moderate', { clientId: 'h1', name: 'n', entity: 'post', content: 'a heron' });
  expect(reply.body).toMatchObject({ status: 'Compliant' });
  await waitFor(
    async () => {
      await page.reload();
      return (await page.locator('tr[data-rule="animals"] .runs').count()) > 0 ? true : undefined;
    },
    { timeoutMs: WAIT, what: 'the shadow counters' },
  );
  const counters = page.locator('.shadow-counts tr[data-rule="animals"]');
  expect(await counters.locator('.would-flag').innerText()).toBe('1');
  expect(await counters.locator('.disagree-live').innerText()).toBe('1');

  await row.locator('button.shadow-toggle', { hasText: 'Stop shadow' }).click();
  await page.waitForURL(/\/console\/settings/);
  expect(await page.locator('.shadow-version').count()).toBe(0);
  expect(errors).toEqual([]);
  await close();
}, 90_000);
