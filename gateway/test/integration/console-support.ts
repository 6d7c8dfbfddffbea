import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ensureChromium } from '../../../deploy/local/chromium';
import { grpcAddressOf, spawnModerator, uniqueName, type ServiceProcess } from '../../../deploy/test-support';
import { startGateway, type Gateway } from './harness';

// The console's browser tests' shared set-up: headless Chromium, the moderator process with the gateway in process,
// a signed-in page.

const BROWSER_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
];

/**
 * Headless Chromium; fails (never skips) with the reason when it is missing and cannot be installed. playwright-core
 * gives every launch a fresh temporary --user-data-dir of its own (and refuses one in `args`).
 */
export function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  const executablePath = ensureChromium();
  return chromium.launch({ executablePath, headless: true, args: [...BROWSER_ARGS, ...extraArgs] });
}

export interface ConsoleStack {
  moderator: ServiceProcess;
  gw: Gateway;
  browser: Browser;
  close(): Promise<void>;
}

/**
 * A moderator process (with `moderatorEnv`), the gateway in process on a database and topics of their own named
 * after `name`, and a browser. Chromium is looked for first, so that its absence fails before anything starts.
 */
export async function startConsoleStack(
  name: string,
  moderatorEnv: Record<string, string> = {},
): Promise<ConsoleStack> {
  ensureChromium();
  const stack = { dbName: uniqueName(name), topicPrefix: `${uniqueName('t')}.` };
  const moderator = spawnModerator(stack, moderatorEnv);
  let gw: Gateway | undefined;
  let browser: Browser;
  try {
    gw = await startGateway({ moderatorAddress: await grpcAddressOf(moderator), ...stack });
    browser = await launchBrowser();
  } catch (err) {
    await gw?.close();
    await moderator.stop();
    throw err;
  }
  return {
    moderator,
    gw,
    browser,
    close: async () => {
      await browser.close();
      await gw.close();
      await moderator.stop();
    },
  };
}

/** A browser context of the usual size, its actions bounded by `timeoutMs`. */
export async function newContext(browser: Browser, timeoutMs: number): Promise<BrowserContext> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  ctx.setDefaultTimeout(timeoutMs);
  return ctx;
}

/** Signs `user` in through the sign-in page that `from` (a console path) redirects to, and waits to land on `landing`. */
export async function signIn(
  page: Page,
  gw: Pick<Gateway, 'url'>,
  user: { email: string; password: string },
  { from = '/console/records', landing = /\/console\/records/ }: { from?: string; landing?: RegExp } = {},
): Promise<void> {
  await page.goto(`${gw.url}${from}`);
  await page.waitForURL(/\/console\/sign-in/);
  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', user.password);
  await page.click('button[type=submit]');
  await page.waitForURL(landing);
}

/** The page's console errors and failed responses (a missing favicon aside), as they come. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text());
  });
  page.on('response', (response) => {
    if (response.status() >= 400 && !response.url().endsWith('/favicon.ico'))
      errors.push(`${response.status()} ${response.url()}`);
  });
  return errors;
}
