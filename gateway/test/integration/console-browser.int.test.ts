import { mkdirSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { COLLECTIONS, type TdbConfigDoc, type TdbSubmissionDoc } from '@vigil/proto';
import { ensureChromium } from '../../../deploy/local/chromium';
import { startReceiver } from '../../../deploy/e2e/support';
import {
  ROOT,
  grpcAddressOf,
  spawnModerator,
  spawnNotifier,
  startImageServer,
  uniqueName,
  waitFor,
  type ImageServer,
  type ServiceProcess,
} from '../../../deploy/test-support';
import { launchBrowser, newContext, signIn } from './console-support';
import { startGateway, type Gateway } from './harness';

// The console in a real headless Chromium against the real stack: moderator and notifier processes, the gateway in
// process, Kafka and the MongoDB-wire store, a webhook receiver on 127.0.0.1. It also writes the console guide's
// screenshots (docs/console-*.png). Deadlines are generous for a busy 2-core machine; nothing sleeps.
const WAIT = 30_000;
// `npm run screenshots` sets CONSOLE_SCREENSHOTS_DIR to docs/ to refresh the console guide's pictures; other runs keep
// theirs out of the working tree.
const DOCS = process.env.CONSOLE_SCREENSHOTS_DIR
  ? path.resolve(ROOT, process.env.CONSOLE_SCREENSHOTS_DIR)
  : path.join(tmpdir(), 'vigil-console-screenshots');

let moderator: ServiceProcess;
let notifier: ServiceProcess;
let gw: Gateway;
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let alice: { tenantId: string; key: string };
let admin: { email: string; password: string };
let images: ImageServer | undefined;

beforeAll(async () => {
  // Fails (never skips) with the reason when Chromium is missing and cannot be installed.
  ensureChromium();
  const stack = { dbName: uniqueName('gwui'), topicPrefix: `${uniqueName('t')}.` };
  // The bundled image model in one worker thread, and image URLs on this host allowed (the image server below).
  moderator = spawnModerator(stack, {
    TENANT_CONFIG_TTL_MS: '0',
    IMAGE_THREADS: '1',
    IMAGE_ALLOWED_CIDRS: '127.0.0.0/8',
  });
  notifier = spawnNotifier(stack, { WEBHOOK_RETRY_SCHEDULE_S: '0.5,1,1' });
  gw = await startGateway({ moderatorAddress: await grpcAddressOf(moderator), ...stack });
  await waitFor(() => notifier.output().includes('notifier ready'), { timeoutMs: WAIT, what: 'the notifier' });
  receiver = await startReceiver();
  images = await startImageServer({ width: 160, height: 120, background: { r: 30, g: 120, b: 200 } });
  alice = await gw.newTenant();
  admin = await gw.newMember(alice.tenantId, 'admin');
  const endpoint = await gw.request('POST', '/api/v1/webhook-endpoints', {
    key: alice.key,
    body: { url: receiver.url },
  });
  expect(endpoint.status).toBe(201);

  browser = await launchBrowser(['--disable-quic', '--disable-component-update', '--disable-sync']);
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await images?.close();
  await gw?.close();
  await Promise.all([moderator?.stop(), notifier?.stop()]);
});

const context = (): Promise<BrowserContext> => newContext(browser, WAIT);

async function flaggedRecord(clientId: string, userClientId: string) {
  const reply = await gw.request('POST', '/api/v1/moderate', {
    key: alice.key,
    body: {
      clientId,
      name: `Comment ${clientId}`,
      entity: 'comment',
      content: { text: 'you are a fucking idiot', imageUrls: ['https://cdn.example.com/picture.png'] },
      metadata: { lang: 'en', thread: 'general' },
      user: { clientId: userClientId, username: `user-${userClientId.slice(-4)}` },
    },
  });
  expect(reply.body.status).toBe('Flagged');
  return reply.body as { id: string; user: string };
}

const webhookEvents = (): Array<{ event: string; payload: Record<string, unknown> }> =>
  receiver.received.map((r) => JSON.parse(r.body) as { event: string; payload: Record<string, unknown> });

describe('the console in a browser', () => {
  it('signs in, opens the flagged record, marks it Compliant, and the webhook arrives', async () => {
    const record = await flaggedRecord(uniqueName('c'), uniqueName('u'));
    const ctx = await context();
    const page = await ctx.newPage();
    const errors: string[] = [];
    // CSP violations and script errors show as console errors; failed loads are checked by response instead, leaving
    // out the favicon the browser asks for on its own.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
        errors.push(message.text());
      }
    });
    page.on('response', (response) => {
      if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) {
        errors.push(`${response.status()} ${response.url()}`);
      }
    });
    await signIn(page, gw, admin);
    const row = page.locator(`tr[data-id="${record.id}"]`);
    await row.waitFor();
    // The keyboard script is loaded from the gateway under the CSP: j/k move the selection.
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    await page.locator('tr.selected').first().waitFor();
    mkdirSync(DOCS, { recursive: true });
    await page.screenshot({ path: path.join(DOCS, 'console-inbox.png') });

    await row.locator('a.open').click();
    await page.waitForURL(new RegExp(`/console/records/${record.id}$`));
    await page.locator('a[href="https://cdn.example.com/picture.png"]').waitFor();
    await page.screenshot({ path: path.join(DOCS, 'console-record.png'), fullPage: false });
    await page.selectOption('form.decision select[name=status]', 'Compliant');
    await page.fill('form.decision textarea[name=reason]', 'Quoted from a film');
    await page.click('form.decision button[type=submit]');
    await page.locator('table.history tr.RecordModerated', { hasText: 'Quoted from a film' }).waitFor();

    await waitFor(() => webhookEvents().find((e) => e.event === 'record.compliant' && e.payload.id === record.id), {
      timeoutMs: WAIT,
      what: 'the record.compliant webhook',
    });
    expect(errors).toEqual([]);

    // Usable on a phone-width screen: nothing wider than the viewport, whatever the record holds (a long unbroken word,
    // link or metadata value wraps).
    const long = `${'w'.repeat(400)} https://example.com/${'p'.repeat(400)}`;
    const wide = await gw.request('POST', '/api/v1/moderate', {
      key: alice.key,
      body: {
        clientId: uniqueName('wide'),
        name: 'n'.repeat(300),
        entity: 'post',
        content: long,
        metadata: { k: 'v'.repeat(400) },
      },
    });
    expect(wide.status).toBe(200);
    for (const [width, height] of [
      [390, 844],
      [1280, 800],
    ] as const) {
      await page.setViewportSize({ width, height });
      for (const url of ['/console/records?status=all', `/console/records/${wide.body.id as string}`]) {
        await page.goto(`${gw.url}${url}`);
        // A string expression: the test is compiled without the DOM library.
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
        expect({ width, url, fits: overflow <= 1 }).toEqual({ width, url, fits: true });
      }
    }
    await ctx.close();
  });

  it("shows the image model's class scores of a record's images on its page, by position, without the URL", async () => {
    // A tenant of its own, whose rule set judges images (the other tests keep the default rule set).
    const bob = await gw.newTenant();
    const member = await gw.newMember(bob.tenantId, 'admin');
    const rules = await gw.request('PUT', '/api/v1/rules', {
      key: bob.key,
      body: {
        rules: [
          {
            id: 'photos',
            name: 'Photos',
            strategies: [{ type: 'images', thresholds: { Porn: 0.9 }, onFetchError: 'flag' }],
          },
        ],
      },
    });
    expect(rules.status).toBe(200);
    await waitFor(() => moderator.output().includes('image model loaded'), {
      timeoutMs: 120_000,
      what: 'the image model',
    });
    const reply = await gw.request('POST', '/api/v1/moderate', {
      key: bob.key,
      body: {
        clientId: uniqueName('img'),
        name: 'A photo',
        entity: 'post',
        content: { text: 'holiday', imageUrls: [`${images!.base}/a.png`, 'http://10.255.255.1/b.png'] },
      },
    });
    expect(reply.status).toBe(200);
    const id = (reply.body as { id: string }).id;

    const ctx = await context();
    const page = await ctx.newPage();
    await signIn(page, gw, member);
    await page.goto(`${gw.url}/console/records/${id}`);
    const table = page.locator('table.image-scores');
    await table.waitFor();
    const headers = await table.locator('thead th').allTextContents();
    expect(headers).toEqual(['Image', 'Drawing', 'Hentai', 'Neutral', 'Porn', 'Sexy']);
    const rows = await table.locator('tbody tr').allTextContents();
    expect(rows).toHaveLength(2);
    // The private address is refused by the fetch policy: a reason instead of scores, and never the URL.
    expect(rows[1]).toMatch(/^\s*2\s*not judged \(\w+\)\s*$/);
    expect(await table.innerHTML()).not.toContain('10.255.255.1');
    const cells = (await table.locator('tbody tr').first().locator('td').allTextContents()).map((t) => t.trim());
    expect(cells[0]).toBe('1');
    const scores = cells.slice(1).map(Number);
    expect(scores).toHaveLength(5);
    for (const score of scores) expect(score).toBeGreaterThanOrEqual(0);
    expect(scores.reduce((sum, score) => sum + score, 0)).toBeCloseTo(1, 1);
    // The highest class is in bold.
    expect(await table.locator('tbody tr').first().locator('strong').count()).toBe(1);
    await ctx.close();
  });

  it('suspends a user, who appeals through their link; approving it in the console reinstates them', async () => {
    const record = await flaggedRecord(uniqueName('s'), uniqueName('u'));
    const ctx = await context();
    const page = await ctx.newPage();
    await signIn(page, gw, admin);
    await page.goto(`${gw.url}/console/users/${record.user}`);
    // The flagged record suspended them automatically; the member reinstates, then suspends with their reason.
    for (const [status, reason] of [
      ['Compliant', 'Looking into it'],
      ['Suspended', 'Repeated insults'],
    ] as const) {
      await page.selectOption('form.decision select[name=status]', status);
      await page.fill('form.decision textarea[name=reason]', reason);
      await page.click('form.decision button[type=submit]');
      await page.locator('table.history', { hasText: reason }).waitFor();
    }
    const user = await gw.request('GET', `/api/v1/users/${record.user}`, { key: alice.key });
    expect(user.body.data.actionStatus).toBe('Suspended');
    const link = new URL(user.body.data.appealUrl as string);

    const visitor = await context();
    const appealPage = await visitor.newPage();
    await appealPage.goto(`${gw.url}${link.pathname}${link.search}`);
    await appealPage.getByText('Repeated insults').waitFor();
    await appealPage.fill('textarea[name=text]', 'I deleted the comment and will keep it civil.');
    await appealPage.check('input[name=confirm]');
    await appealPage.click('button[type=submit]');
    await appealPage.getByText('your appeal was sent').waitFor();
    // The page keeps its link: a reload shows the appeal as received and sends nothing again.
    await appealPage.reload();
    await appealPage.getByText('Your appeal was received').waitFor();
    await visitor.close();

    await page.goto(`${gw.url}/console/appeals`);
    const appeal = page.locator('article.appeal', { hasText: 'I deleted the comment' });
    await appeal.locator('textarea[name=reason]').fill('Thanks for fixing it');
    await appeal.locator('button[value=Approved]').click();
    await page.waitForURL(/\/console\/appeals$/);
    await page.goto(`${gw.url}/console/users/${record.user}`);
    await page.locator('dl.facts .badge.Compliant').waitFor();
    const after = await gw.request('GET', `/api/v1/users/${record.user}`, { key: alice.key });
    expect(after.body.data).toMatchObject({ actionStatus: 'Compliant', appealUrl: null });
    await ctx.close();
  });

  it('creates a hash bank, adds a hash, pages the hashes, and disables, confirms, deconfirms and withdraws one', async () => {
    const ctx = await context();
    const page = await ctx.newPage();
    await signIn(page, gw, admin);
    await page.goto(`${gw.url}/console/hash-banks`);
    const name = uniqueName('bank');
    await page.fill('#new-bank input[name=name]', name);
    await page.selectOption('#new-bank select[name=kind]', 'md5');
    await page.selectOption('#new-bank select[name=action]', 'flag_and_suspend');
    await page.click('#new-bank button[type=submit]');
    await page.waitForURL(/\/console\/hash-banks\/bnk_/);
    const bankId = new URL(page.url()).pathname.split('/').at(-1)!;
    const banks = await gw.request('GET', '/api/v1/hash-banks', { key: alice.key });
    expect(banks.body.data).toContainEqual(
      expect.objectContaining({ id: bankId, name, kind: 'md5', action: 'flag_and_suspend', negative: false }),
    );

    const value = 'ab'.repeat(16);
    await page.goto(`${gw.url}/console/hash-banks/${bankId}`);
    await page.fill('#new-hash input[name=hash]', value.toUpperCase());
    await page.fill('#new-hash textarea[name=metadata]', 'source=stopncii\ncase=42');
    await page.click('#new-hash button[type=submit]');
    const hashOf = async () => {
      const all = await gw.request('GET', `/api/v1/hash-banks/${bankId}/hashes?limit=100`, { key: alice.key });
      return (all.body.data as { id: string; hash: string }[]).find((hash) => hash.hash === value) as
        { id: string; enabled: boolean; review: string; metadata: Record<string, string> } | undefined;
    };
    await waitFor(async () => (await hashOf()) !== undefined, { timeoutMs: WAIT, what: 'the added hash' });
    const added = (await hashOf())!;
    expect(added).toMatchObject({ enabled: true, review: 'unreviewed', metadata: { source: 'stopncii', case: '42' } });
    // The hash added is matched against the tenant's stored records; the bank's card shows that pass.
    await page.goto(`${gw.url}/console/hash-banks/${bankId}`);
    await page.locator('[data-retro-pass]').getByText('1 hash').waitFor();

    const row = () => page.locator(`tr[data-id="${added.id}"]`);
    const press = async (label: string, expected: Record<string, unknown>) => {
      await page.goto(`${gw.url}/console/hash-banks/${bankId}`);
      await row().getByRole('button', { name: label, exact: true }).click();
      await page.waitForURL(new RegExp(`/console/hash-banks/${bankId}$`));
      expect(await hashOf()).toMatchObject(expected);
    };
    await press('Disable', { enabled: false });
    await press('Enable', { enabled: true });
    await press('Confirm', { review: 'confirmed' });
    await press('Deconfirm', { review: 'deconfirmed' });
    await page.goto(`${gw.url}/console/hash-banks/${bankId}`);
    await row().getByRole('button', { name: 'Withdraw', exact: true }).click();
    await page.waitForURL(new RegExp(`/console/hash-banks/${bankId}$`));
    expect(await hashOf()).toBeUndefined();
    expect(await row().count()).toBe(0);

    // More hashes than a page holds, through the API; the page shows the first page and links the next.
    const bulk = Array.from({ length: 26 }, (_, i) => ({ hash: i.toString(16).padStart(32, '0') }));
    expect(
      (await gw.request('POST', `/api/v1/hash-banks/${bankId}/hashes`, { key: alice.key, body: { hashes: bulk } }))
        .status,
    ).toBe(201);
    await page.reload();
    expect(await page.locator('table.bank-hashes tbody tr').count()).toBe(25);
    await page.click('nav.pager a[rel=next]');
    await page.waitForURL(/after=hsh_/);
    expect(await page.locator('table.bank-hashes tbody tr').count()).toBe(1);
    // The same form from this origin with the session's cookie but without its CSRF token changes nothing.
    const forged = await page.request.post(`${gw.url}/console/hash-banks/${bankId}/hashes`, {
      form: { hash: 'cd'.repeat(16) },
      headers: { origin: new URL(gw.url).origin },
    });
    expect(forged.status()).toBe(403);
    await ctx.close();
  });

  it('imports a hash file chosen in the bank page, refuses a file with a bad row whole, checks the CSRF token, and lists the feeds', async () => {
    const ctx = await context();
    const page = await ctx.newPage();
    await signIn(page, gw, admin);
    const created = await gw.request('POST', '/api/v1/hash-banks', {
      key: alice.key,
      body: { name: uniqueName('import'), kind: 'md5' },
    });
    expect(created.status).toBe(201);
    const bankId = (created.body.data as { id: string }).id;
    const hashesOf = async () => {
      const all = await gw.request('GET', `/api/v1/hash-banks/${bankId}/hashes?limit=100`, { key: alice.key });
      return all.body.data as { hash: string; metadata: Record<string, string> }[];
    };

    // A file with a header row, a comment and a row the bank holds already (added through the API first).
    const [first, second, third] = ['01', '02', '03'].map((byte) => byte.repeat(16)) as [string, string, string];
    expect(
      (
        await gw.request('POST', `/api/v1/hash-banks/${bankId}/hashes`, {
          key: alice.key,
          body: { hashes: [{ hash: third }] },
        })
      ).status,
    ).toBe(201);
    const file = `hash,source,case\n# from the exchange\n${first},stopncii,11\n${second.toUpperCase()},ncmec,12\n${third},x,13\n`;
    await page.goto(`${gw.url}/console/hash-banks/${bankId}`);
    await page.setInputFiles('#import-hashes input[type=file]', {
      name: 'hashes.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(file),
    });
    await waitFor(async () => (await page.inputValue('#import-hashes textarea[name=csv]')) === file, {
      timeoutMs: WAIT,
      what: 'the chosen file read into the form',
    });
    await page.click('#import-hashes button[type=submit]');
    await page.waitForURL(/added=2&duplicates=1/);
    expect(await page.textContent('#imported')).toContain('Imported 2 new hashes; 1 the bank held already.');
    const after = await hashesOf();
    expect(after).toHaveLength(3);
    expect(after).toContainEqual(
      expect.objectContaining({ hash: first, metadata: { source: 'stopncii', case: '11' } }),
    );
    expect(after).toContainEqual(expect.objectContaining({ hash: second, metadata: { source: 'ncmec', case: '12' } }));

    // A bad row fails the whole file: the error page names its line, and nothing is added.
    await page.goto(`${gw.url}/console/hash-banks/${bankId}`);
    await page.fill('#import-hashes textarea[name=csv]', `${'04'.repeat(16)}\nnot-a-hash\n`);
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.url().endsWith(`/console/hash-banks/${bankId}/import`)),
      page.click('#import-hashes button[type=submit]'),
    ]);
    expect(answer.status()).toBe(400);
    expect(await page.textContent('body')).toContain('line 2');
    expect(await hashesOf()).toHaveLength(3);

    // The same form with the session's cookie but without its CSRF token imports nothing.
    const forged = await page.request.post(`${gw.url}/console/hash-banks/${bankId}/import`, {
      form: { csv: '05'.repeat(16) },
      headers: { origin: new URL(gw.url).origin },
    });
    expect(forged.status()).toBe(403);
    expect(await hashesOf()).toHaveLength(3);

    // The bank's feeds are listed on its page, each with its source, URL and last run.
    const url = 'https://93.184.216.34/hashes.csv';
    const feed = await gw.request('POST', `/api/v1/hash-banks/${bankId}/feeds`, {
      key: alice.key,
      body: { source: 'file', url },
    });
    expect(feed.status).toBe(201);
    await page.goto(`${gw.url}/console/hash-banks/${bankId}`);
    const row = page.locator(`table.hash-feeds tr[data-id="${(feed.body.data as { id: string }).id}"]`);
    expect(await row.textContent()).toContain(url);
    expect(await row.textContent()).toContain('file');
    await ctx.close();
  });

  it('refuses forms a page of another origin of the same site posts (another port of this host), sign-in included', async () => {
    // Another program on this host, say, serving a page that signs the visitor in as the attacker (login CSRF) and
    // posts the appeal form: same site as the console (ports do not count), so Chromium sends SameSite cookies along.
    const attacker = await gw.newMember(alice.tenantId);
    const forms = `<!doctype html><html><body>
      <form id="in" method="post" action="${gw.url}/console/sign-in">
        <input name="email" value="${attacker.email}" /><input name="password" value="${attacker.password}" />
      </form>
      <script>document.getElementById('in').submit()</script></body></html>`;
    const appealForm = `<!doctype html><html><body>
      <form id="ap" method="post" action="${gw.url}/appeal">
        <input name="token" value="x.y" /><input name="text" value="t" /><input name="confirm" value="yes" />
      </form>
      <script>document.getElementById('ap').submit()</script></body></html>`;
    const other = http.createServer((req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(req.url === '/appeal' ? appealForm : forms);
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherOrigin = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
    const ctx = await context();
    try {
      const page = await ctx.newPage();
      for (const [from, target] of [
        [`${otherOrigin}/`, `${gw.url}/console/sign-in`],
        [`${otherOrigin}/appeal`, `${gw.url}/appeal`],
      ] as const) {
        const answer = page.waitForResponse((r) => r.url() === target && r.request().method() === 'POST');
        await page.goto(from);
        const response = await answer;
        expect({ target, status: response.status() }).toEqual({ target, status: 403 });
        expect(await response.request().headerValue('origin')).toBe(otherOrigin);
      }
      expect((await ctx.cookies(gw.url)).map((cookie) => cookie.name)).not.toContain('vigil_console');
    } finally {
      await ctx.close();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it("keeps tenant B's moderator out of tenant A, signed-out browsers at sign-in, and forged changes out", async () => {
    const record = await flaggedRecord(uniqueName('b'), uniqueName('u'));
    const bob = await gw.newTenant();
    const bobMember = await gw.newMember(bob.tenantId);
    const ctx = await context();
    const page = await ctx.newPage();
    await signIn(page, gw, bobMember);
    const response = await page.goto(`${gw.url}/console/records/${record.id}`);
    expect(response?.status()).toBe(404);
    await page.goto(`${gw.url}/console/records?status=all`);
    expect(await page.locator(`tr[data-id="${record.id}"]`).count()).toBe(0);

    // A form posted with the session cookie but without the session's CSRF token is refused.
    const forged = await ctx.request.post(`${gw.url}/console/records/${record.id}/moderation`, {
      form: { status: 'Compliant', reason: 'forged' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);

    await page.click('nav.top button[type=submit]');
    await page.waitForURL(/\/console\/sign-in$/);
    await page.goto(`${gw.url}/console/appeals`);
    await page.waitForURL(/\/console\/sign-in\?next=%2Fconsole%2Fappeals$/);
    await ctx.close();
  });
});

it('saves a draft rule set from the editor, promotes it, and the next moderation is judged by it', async () => {
  const tenant = await gw.newTenant();
  const owner = await gw.newMember(tenant.tenantId, 'admin');
  const ctx = await context();
  try {
    const page = await ctx.newPage();
    await signIn(page, gw, owner);
    await page.goto(`${gw.url}/console/settings`);
    await page.fill(
      'textarea[name=rules]',
      JSON.stringify({
        rules: [{ id: 'birds', name: 'Birds', strategies: [{ type: 'blocklist', words: ['heron'] }] }],
      }),
    );
    await page.fill('input[name=note]', 'herons are off topic');
    await page.click('button[value=draft]');
    await page.waitForURL(/\/console\/settings$/);
    const draftRow = page.locator('tr.version[data-version="1"]');
    await draftRow.waitFor();
    expect(await draftRow.innerText()).toContain('herons are off topic');
    expect(await page.locator('.live-version').innerText()).toBe('default');
    const judged = async () =>
      (
        await gw.request('POST', '/api/v1/moderate', {
          key: tenant.key,
          body: { clientId: uniqueName('c'), name: 'n', entity: 'post', content: 'a heron stands' },
        })
      ).body as { status: string; ruleSetVersion: number };
    expect(await judged()).toMatchObject({ status: 'Compliant', ruleSetVersion: 0 });
    await draftRow.locator('button', { hasText: 'Promote' }).click();
    await page.waitForURL(/\/console\/settings$/);
    await page.locator('.live-version', { hasText: 'v1' }).waitFor();
    expect(await judged()).toMatchObject({ status: 'Flagged', ruleSetVersion: 1 });
  } finally {
    await ctx.close();
  }
});

it('shows the Transparency Database setting and the latest submissions on the settings page', async () => {
  const tenant = await gw.newTenant();
  const owner = await gw.newMember(tenant.tenantId, 'admin');
  const now = new Date();
  // What the gateway and the notifier write (the API path is tested in transparency-db.int.test.ts).
  await gw.db.collection<TdbConfigDoc>(COLLECTIONS.tdbConfigs).insertOne({
    _id: tenant.tenantId,
    sealed: 'v1.sealed',
    hint: '…wxyz (40 characters)',
    baseUrl: 'https://tdb.example',
    territorialScope: ['DE', 'AT'],
    defaults: { contentType: ['CONTENT_TYPE_TEXT'] },
    updatedAt: now,
  });
  const submission = (id: string, state: TdbSubmissionDoc['state'], lastError?: string): TdbSubmissionDoc => ({
    _id: `tdb_${id}`,
    tenantId: tenant.tenantId,
    eventId: id,
    statementId: `sor_${id}`,
    subject: { type: 'record', id: 'rec_console' },
    payload: {} as TdbSubmissionDoc['payload'],
    state,
    attemptCount: 1,
    attempts: [],
    ...(lastError ? { lastError } : {}),
    dueAt: now,
    createdAt: now,
    updatedAt: now,
  });
  await gw.db
    .collection<TdbSubmissionDoc>(COLLECTIONS.tdbSubmissions)
    .insertMany([submission(uniqueName('e'), 'submitted'), submission(uniqueName('e'), 'failed', 'rejected')]);
  const ctx = await context();
  try {
    const page = await ctx.newPage();
    await signIn(page, gw, owner);
    await page.goto(`${gw.url}/console/settings`);
    const status = await page.locator('.tdb-status').innerText();
    expect(status).toContain('https://tdb.example');
    expect(status).toContain('DE, AT');
    expect(status).toContain('…wxyz');
    expect(await page.locator('tr.submission').count()).toBe(2);
    expect(await page.locator('tr.submission[data-status=failed]').innerText()).toContain('rejected');
  } finally {
    await ctx.close();
  }
});
