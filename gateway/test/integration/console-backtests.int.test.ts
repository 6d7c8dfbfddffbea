import type { Browser } from 'playwright-core';
import { recordIdFor } from '@vigil/proto';
import { waitFor } from '../../../deploy/test-support';
import { collectErrors, newContext, signIn, startConsoleStack, type ConsoleStack } from './console-support';
import type { Gateway } from './harness';

// "Backtest this draft" on the rules page and the result view, in a real headless Chromium against the real moderator
// (built dist), Kafka and the MongoDB-wire store. Deadlines are generous for a busy 2-core machine; nothing sleeps.
const WAIT = 30_000;

let stack: ConsoleStack;
let gw: Gateway;
let browser: Browser;

beforeAll(async () => {
  stack = await startConsoleStack('gwuibt');
  ({ gw, browser } = stack);
});
afterAll(() => stack?.close());

const words = (list: string[]) => ({
  rules: [{ id: 'animals', name: 'Animals', strategies: [{ type: 'blocklist', words: list }] }],
});

it('backtests a draft from the rules page and shows what would change, per rule', async () => {
  const tenant = await gw.newTenant();
  const admin = await gw.newMember(tenant.tenantId, 'admin');
  const api = (method: string, path: string, body: unknown) =>
    gw.request(method, `/api/v1${path}`, { key: tenant.key, body });
  expect((await api('PUT', '/rules', words(['otter']))).status).toBe(200);
  for (const [clientId, text] of [
    ['o1', 'an otter'],
    ['h1', 'a heron'],
    ['f1', 'a fish'],
  ]) {
    expect((await api('POST', '/moderate', { clientId, name: 'n', entity: 'post', content: text })).status).toBe(200);
  }
  const draft = await api('POST', '/rules/versions', { ...words(['otter', 'heron']), note: 'herons too' });
  expect(draft.status).toBe(201);
  const version = (draft.body as { data: { version: number } }).data.version;

  const ctx = await newContext(browser, WAIT);
  const page = await ctx.newPage();
  const errors = collectErrors(page);
  await signIn(page, gw, admin, { from: '/console/settings', landing: /\/console\// });
  await page.goto(`${gw.url}/console/settings`);
  const row = page.locator(`tr.version[data-version="${version}"]`);
  await row.locator('button', { hasText: 'Backtest this draft' }).click();
  await page.waitForURL(/\/console\/backtests\/bt_/);

  // The page shows progress while the job runs; it is reloaded (its Refresh link) until the job ends.
  await waitFor(
    async () => {
      const status = await page.locator('.backtest-status').innerText();
      if (status === 'succeeded') return true;
      expect(['queued', 'running']).toContain(status);
      await page.reload();
      return undefined;
    },
    { timeoutMs: WAIT, what: 'the backtest to succeed' },
  );
  expect(await page.locator('.judged').innerText()).toContain('3');
  const toFlagged = page.locator('.to-flagged');
  expect(await toFlagged.innerText()).toContain('1');
  expect(await toFlagged.locator('a').getAttribute('href')).toBe(
    `/console/records/${recordIdFor(tenant.tenantId, 'h1')}`,
  );
  expect(await page.locator('tr.rule[data-rule="animals"] .flags').innerText()).toBe('2');
  expect(errors).toEqual([]);

  // Nothing changed: the heron record is still Compliant.
  const heron = await gw.request('GET', `/api/v1/records/${recordIdFor(tenant.tenantId, 'h1')}`, { key: tenant.key });
  expect(heron.body.data).toMatchObject({ moderationStatus: 'Compliant' });
  await ctx.close();
});
