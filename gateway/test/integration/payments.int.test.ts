import { randomBytes } from 'node:crypto';
import { COLLECTIONS, userIdFor } from '@vigil/proto';
import {
  grpcAddressOf,
  loggedPort,
  spawnModerator,
  spawnNotifier,
  uniqueName,
  waitFor,
  type ServiceProcess,
  type TestStack,
} from '../../../deploy/test-support';
import { startStripe, type StripeServer } from '../../../deploy/test-support/stripe';
import { startReceiver } from '../../../deploy/e2e/support';
import { startGateway, type Gateway } from './harness';

/**
 * Payment enforcement through the whole stack: the gateway stores the tenant's Stripe key, the moderator changes the
 * user's status (by threshold or by hand), and the notifier pauses or resumes charges on the connected account at
 * Stripe's own stripe-mock, behind a proxy that records every call and can answer with Stripe's errors instead.
 */
const ENCRYPTION_KEY = randomBytes(32);
const STRIPE_KEY = `sk_test_${randomBytes(18).toString('hex')}`;
const PROFANE = 'you are a fucking idiot';

let stripe: StripeServer;
let moderator: ServiceProcess;
let notifier: ServiceProcess;
let stack: TestStack;
let notifierEnv: Record<string, string>;
let gw: Gateway;
let tenant: { tenantId: string; key: string };

beforeAll(async () => {
  stack = { dbName: uniqueName('pay'), topicPrefix: `${uniqueName('t')}.` };
  stripe = await startStripe();
  moderator = spawnModerator(stack, { TENANT_CONFIG_TTL_MS: '0' });
  // The restarted notifier joins the same group.
  notifierEnv = {
    KAFKA_GROUP_ID: uniqueName('grp'),
    KAFKA_SESSION_TIMEOUT_MS: '6000',
    SECRETS_ENCRYPTION_KEY: ENCRYPTION_KEY.toString('base64'),
    STRIPE_API_BASE_URL: stripe.url,
    PAYMENTS_TIMEOUT_MS: '5000',
    PAYMENTS_POLL_MS: '100',
    // Quick first retries, then a window of several seconds in which a restart still finds the action pending.
    PAYMENTS_RETRY_SCHEDULE_S: '0.2,0.2,2,2,2,2,2,2,2,2',
    DELIVERY_LEASE_MARGIN_MS: '1000',
  };
  notifier = spawnNotifier(stack, notifierEnv);
  const moderatorAddress = await grpcAddressOf(moderator);
  await loggedPort(notifier, 'admin server listening');
  gw = await startGateway({
    moderatorAddress,
    ...stack,
    secretsEncryptionKey: [ENCRYPTION_KEY],
  });
  tenant = await gw.newTenant();
  const stored = await gw.request('PATCH', '/api/v1/settings', {
    key: tenant.key,
    body: { payments: { stripeSecretKey: STRIPE_KEY } },
  });
  expect(stored.status).toBe(200);
}, 180000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([moderator?.stop(), notifier?.stop()]);
  await stripe?.close();
});

/** Ingests a record for the user and waits until the moderator stored the user; returns the user id. */
async function seller(clientId: string, user: Record<string, unknown>, content = 'a fine offer'): Promise<string> {
  const reply = await gw.request('POST', '/api/v1/ingest', {
    key: tenant.key,
    body: {
      clientId: `rec-${clientId}`,
      name: 'Listing',
      entity: 'listing',
      content: { text: content },
      user: { clientId, ...user },
    },
  });
  expect(reply).toMatchObject({ status: 202 });
  const userId = userIdFor(tenant.tenantId, clientId);
  await waitFor(async () => (await gw.request('GET', `/api/v1/users/${userId}`, { key: tenant.key })).status === 200, {
    what: `user ${clientId}`,
  });
  return userId;
}

async function setStatus(userId: string, status: string, key = tenant.key): Promise<void> {
  const reply = await gw.request('POST', `/api/v1/users/${userId}/status`, {
    key,
    body: { status, reason: 'payments test' },
  });
  expect(reply.status).toBe(200);
}

const actions = async (userId: string, key = tenant.key) => {
  const reply = await gw.request('GET', `/api/v1/users/${userId}/payment-actions`, { key });
  expect(reply.status).toBe(200);
  return reply.body.data as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
};

/** Waits until the user's newest action is in `status` (and, optionally, there are `count` of them). */
const settled = (userId: string, status: string, count = 1) =>
  waitFor(
    async () => {
      const list = await actions(userId);
      return list.length === count && list[0]?.status === status ? list : undefined;
    },
    { timeoutMs: 30000, what: `payment action of ${userId} to be ${status}` },
  );

describe('payments key', () => {
  it('stores the Stripe key encrypted and shows only a hint; refuses a malformed key; clears it', async () => {
    const other = await gw.newTenant();
    const bad = await gw.request('PATCH', '/api/v1/settings', {
      key: other.key,
      body: { payments: { stripeSecretKey: 'pk_test_thisisapublishablekey' } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_error');

    const key = `rk_live_${randomBytes(16).toString('hex')}`;
    const set = await gw.request('PATCH', '/api/v1/settings', {
      key: other.key,
      body: { testMode: true, payments: { stripeSecretKey: key } },
    });
    expect(set.status).toBe(200);
    expect(set.body.testMode).toBe(true);
    expect(set.body.payments).toEqual({ stripeSecretKey: `rk_live_…${key.slice(-4)}` });
    const read = await gw.request('GET', '/api/v1/settings', { key: other.key });
    expect(read.body.payments).toEqual({ stripeSecretKey: `rk_live_…${key.slice(-4)}` });
    // Neither the stored document nor the logs hold the key.
    const doc = await gw.db.collection<{ _id: string }>(COLLECTIONS.paymentKeys).findOne({ _id: other.tenantId });
    expect(doc).not.toBeNull();
    expect(JSON.stringify(doc)).not.toContain(key.slice(8));
    expect(gw.logText()).not.toContain(key.slice(8));

    const cleared = await gw.request('PATCH', '/api/v1/settings', {
      key: other.key,
      body: { payments: { stripeSecretKey: null } },
    });
    expect(cleared.body.payments).toEqual({ stripeSecretKey: null });
    expect(await gw.db.collection(COLLECTIONS.paymentKeys).countDocuments({ _id: other.tenantId } as never)).toBe(0);
  });

  it('answers 400 payments_not_configured without SECRETS_ENCRYPTION_KEY, changing nothing', async () => {
    const plain = await startGateway();
    try {
      const other = await plain.newTenant();
      const reply = await plain.request('PATCH', '/api/v1/settings', {
        key: other.key,
        body: { suspensionThreshold: 7, payments: { stripeSecretKey: STRIPE_KEY } },
      });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('payments_not_configured');
      const read = await plain.request('GET', '/api/v1/settings', { key: other.key });
      expect(read.body.suspensionThreshold).toBe(1);
      expect(read.body.payments).toEqual({ stripeSecretKey: null });
    } finally {
      await plain.close();
    }
  });
});

describe('payment enforcement', () => {
  it('pauses charges when a seller is suspended by the threshold, and resumes charges and payouts on reinstatement', async () => {
    // Iffy's field name, accepted as an alias.
    const userId = await seller('seller-1', { stripeAccountId: 'acct_seller1' }, PROFANE);
    const [pause] = await settled(userId, 'succeeded');
    const [call] = stripe.callsFor('acct_seller1');
    expect(call).toMatchObject({
      method: 'POST',
      path: '/v1/accounts/acct_seller1',
      authorization: `Bearer ${STRIPE_KEY}`,
      contentType: 'application/x-www-form-urlencoded',
      form: { 'risk_controls[charges][pause_requested]': 'true' },
      // stripe-mock checked the request against Stripe's API description and accepted it.
      status: 200,
      injected: false,
    });
    expect(call!.idempotencyKey).toMatch(/^vigil_pay_\w+_0$/);
    expect(pause).toMatchObject({
      userId,
      action: 'pause',
      accountId: 'acct_seller1',
      attemptCount: 1,
      stripeRequestId: call!.requestId,
      lastError: null,
      completedAt: expect.any(String),
    });
    expect(pause!.attempts).toEqual([
      expect.objectContaining({ statusCode: 200, error: null, idempotencyKey: call!.idempotencyKey }),
    ]);
    const user = await gw.request('GET', `/api/v1/users/${userId}`, { key: tenant.key });
    expect(user.body.data.actionStatus).toBe('Suspended');

    await setStatus(userId, 'Compliant');
    const [resume, first] = await settled(userId, 'succeeded', 2);
    expect(resume).toMatchObject({ action: 'resume', accountId: 'acct_seller1', attemptCount: 1 });
    expect(first).toMatchObject({ action: 'pause' });
    // Paged newest first: starting_after reaches the older action, ending_before the newer one.
    const page = (query: string) =>
      gw.request('GET', `/api/v1/users/${userId}/payment-actions?${query}`, { key: tenant.key });
    expect((await page('limit=1')).body).toEqual({ data: [resume], has_more: true });
    expect((await page(`limit=1&starting_after=${resume!.id}`)).body).toEqual({ data: [first], has_more: false });
    expect((await page(`ending_before=${first!.id}`)).body).toEqual({ data: [resume], has_more: false });
    for (const param of ['starting_after', 'ending_before']) {
      const refused = await page(`${param}=pay_nope`);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'validation_error', details: [{ path: [param] }] });
    }
    const calls = stripe.callsFor('acct_seller1');
    expect(calls).toHaveLength(2);
    expect(calls[1]).toMatchObject({
      form: {
        'risk_controls[charges][pause_requested]': 'false',
        'risk_controls[payouts][pause_requested]': 'false',
      },
      status: 200,
    });
    expect(calls[1]!.idempotencyKey).not.toBe(calls[0]!.idempotencyKey);
  });

  it('retries a 429 with the same idempotency key and a 500 with a fresh one, then succeeds', async () => {
    const userId = await seller('seller-2', { paymentsAccountId: 'acct_seller2' });
    stripe.failNext('acct_seller2', 'rate_limited', 'server_error');
    await setStatus(userId, 'Banned');
    const [action] = await settled(userId, 'succeeded');
    const calls = stripe.callsFor('acct_seller2');
    expect(calls.map((c) => c.status)).toEqual([429, 500, 200]);
    const [k0, k1, k2] = calls.map((c) => c.idempotencyKey);
    // Stripe replays a key's saved answer, 5xx included: only a 5xx moves on to a new key.
    expect(k1).toBe(k0);
    expect(k2).not.toBe(k1);
    expect(k2).toMatch(/_1$/);
    expect(action).toMatchObject({ action: 'pause', attemptCount: 3, stripeRequestId: calls[2]!.requestId });
    expect(action!.attempts.map((a: { statusCode: number; error: string | null }) => [a.statusCode, a.error])).toEqual([
      [429, 'rate_limited'],
      [500, 'server_error'],
      [200, null],
    ]);
    expect(action!.attempts[1].stripeErrorType).toBe('api_error');
  });

  it('records a 400 as failed without retrying, and the next seller is paused all the same', async () => {
    const gone = await seller('seller-3', { paymentsAccountId: 'acct_gone' });
    const next = await seller('seller-4', { paymentsAccountId: 'acct_seller4' });
    stripe.failAlways('acct_gone', 'invalid_account');
    await setStatus(gone, 'Suspended');
    await setStatus(next, 'Suspended');
    await settled(next, 'succeeded');
    const [failed] = await settled(gone, 'failed');
    expect(failed).toMatchObject({ action: 'pause', accountId: 'acct_gone', attemptCount: 1, lastError: 'rejected' });
    expect(failed!.attempts[0]).toMatchObject({
      statusCode: 400,
      error: 'rejected',
      stripeErrorType: 'invalid_request_error',
      stripeErrorCode: 'account_invalid',
    });
    expect(stripe.callsFor('acct_gone')).toHaveLength(1);
    stripe.failAlways('acct_gone', undefined);
  });

  it('calls nothing for a user without an account, nor for a tenant that stored no key', async () => {
    const noAccount = await seller('seller-5', { username: 'no-stripe' });
    await setStatus(noAccount, 'Suspended');
    const [skipped] = await settled(noAccount, 'skipped');
    expect(skipped).toMatchObject({ skipReason: 'no_account', accountId: null, attemptCount: 0 });

    const keyless = await gw.newTenant();
    const hook = await startReceiver();
    try {
      const endpoint = await gw.request('POST', '/api/v1/webhook-endpoints', {
        key: keyless.key,
        body: { url: hook.url, events: ['user.suspended'] },
      });
      expect(endpoint.status).toBe(201);
      const ingest = await gw.request('POST', '/api/v1/ingest', {
        key: keyless.key,
        body: {
          clientId: 'rec-keyless',
          name: 'Listing',
          entity: 'listing',
          content: { text: 'a fine offer' },
          user: { clientId: 'keyless-1', paymentsAccountId: 'acct_keyless' },
        },
      });
      expect(ingest.status).toBe(202);
      const userId = userIdFor(keyless.tenantId, 'keyless-1');
      await waitFor(
        async () => (await gw.request('GET', `/api/v1/users/${userId}`, { key: keyless.key })).status === 200,
      );
      await setStatus(userId, 'Suspended', keyless.key);
      // The notifier plans payment actions before it stores the event's webhooks: once the webhook arrived, the
      // event was fully handled.
      await waitFor(() => hook.received.length > 0, { what: 'user.suspended webhook' });
      expect(await actions(userId, keyless.key)).toEqual([]);
      expect(stripe.callsFor('acct_keyless')).toEqual([]);
    } finally {
      await hook.close();
    }
  });

  it('loses no action when the notifier is killed while Stripe is unavailable', async () => {
    const userId = await seller('seller-6', { paymentsAccountId: 'acct_seller6' });
    stripe.failAlways('acct_seller6', 'unavailable');
    await setStatus(userId, 'Suspended');
    await waitFor(async () => (await actions(userId))[0]?.attemptCount >= 1, { what: 'a failed attempt' });
    await notifier.stop('SIGKILL');
    stripe.failAlways('acct_seller6', undefined);
    notifier = spawnNotifier(stack, notifierEnv);
    const [action] = await settled(userId, 'succeeded');
    const calls = stripe.callsFor('acct_seller6');
    expect(calls[calls.length - 1]!.status).toBe(200);
    expect(calls.slice(0, -1).every((c) => c.status === 503)).toBe(true);
    expect(action!.attemptCount).toBe(calls.length);
  });
});
