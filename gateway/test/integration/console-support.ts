import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ensureChromium } from '../../../deploy/local/chromium';
import type { ParsedMail } from 'mailparser';
import { waitFor, type ServiceProcess } from '../../../deploy/test-support';
import { smtpReceiver, type SmtpReceiver } from '../../../deploy/test-support/smtp-receiver';
import { emailEnv, startModeratorStack, startServiceStack, type Gateway, type ServiceStack } from './harness';

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
  const stack = await startModeratorStack({ name, moderatorEnv });
  let browser: Browser;
  try {
    browser = await launchBrowser();
  } catch (err) {
    await stack.close();
    throw err;
  }
  return {
    moderator: stack.moderator,
    gw: stack.gw,
    browser,
    close: async () => {
      await browser.close();
      await stack.close();
    },
  };
}

/** A webhook's body, as far as every event shares it. */
export interface ReceivedHook {
  event: string;
  id: string;
  payload: { id: string };
}

/** Days until a signed link's token expires (its payload's `e`, seconds). */
export function expiryDays(token: string | undefined): number {
  const payload = JSON.parse(Buffer.from((token ?? '').split('.')[0] ?? '', 'base64url').toString()) as { e: number };
  return (payload.e * 1000 - Date.now()) / 86_400_000;
}

/** The whole stack with an SMTP server and a browser (see startMailingStack). */
export interface MailingStack extends ServiceStack {
  smtp: SmtpReceiver;
  browser: Browser;
  /** The first webhook of `event` about `id` (its payload's id) the receiver got, within `readyMs`. */
  webhookFor<T extends ReceivedHook>(event: string, id: string): Promise<T>;
  /** A browser context of the usual size, its actions bounded by `readyMs`. */
  newContext(): Promise<BrowserContext>;
  /** The first email to `address` with `subject` in its subject line, within `readyMs`. */
  mailTo(address: string, subject: string): Promise<ParsedMail>;
  /** Closes the browser, the services and the SMTP server. */
  close(): Promise<void>;
}

/**
 * startServiceStack for the email and statement tests, with an SMTP server on 127.0.0.1 and a browser: the notifier
 * sends emails through that server (links signed with `appealSecret`) and retries webhooks within seconds, the
 * moderator reads tenant settings afresh. Chromium is looked for first, so that its absence fails before anything
 * starts.
 */
export async function startMailingStack(options: {
  name: string;
  appealSecret: string;
  readyMs: number;
}): Promise<MailingStack> {
  ensureChromium();
  const smtp = smtpReceiver();
  const smtpPort = await smtp.listen();
  let stack: ServiceStack | undefined;
  let browser: Browser;
  try {
    stack = await startServiceStack({
      name: options.name,
      moderatorEnv: { TENANT_CONFIG_TTL_MS: '0' },
      notifierEnv: (gateway) => ({
        WEBHOOK_RETRY_SCHEDULE_S: '0.5,1,1',
        ...emailEnv(smtpPort, gateway, options.appealSecret),
      }),
      readyMs: options.readyMs,
    });
    browser = await launchBrowser();
  } catch (err) {
    await stack?.close();
    await smtp.close();
    throw err;
  }
  const services = stack;
  const timeoutMs = options.readyMs;
  return {
    ...services,
    smtp,
    browser,
    newContext: () => newContext(browser, timeoutMs),
    webhookFor: <T extends ReceivedHook>(event: string, id: string) =>
      waitFor(
        () =>
          services.receiver.received
            .map((hook) => JSON.parse(hook.body) as T)
            .find((hook) => hook.event === event && hook.payload.id === id),
        { timeoutMs, what: `${event} of ${id}` },
      ),
    mailTo: (address: string, subject: string) =>
      waitFor(
        () =>
          smtp.received.find(
            (mail) =>
              (Array.isArray(mail.to) ? mail.to : [mail.to]).some((to) => to?.text === address) &&
              (mail.subject ?? '').includes(subject),
          ),
        { timeoutMs, what: `the "${subject}" email` },
      ),
    close: async () => {
      await browser.close();
      await services.close();
      await smtp.close();
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
