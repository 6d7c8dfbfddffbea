import { randomBytes } from 'node:crypto';
import {
  COLLECTIONS,
  SecretBox,
  maskSecretKey,
  paymentKeyContext,
  type PaymentActionDoc,
  type PaymentKeyDoc,
  type UserDoc,
} from '@vigil/proto';
import { waitFor } from '../../../deploy/test-support';
import { startStripe, type StripeServer } from '../../../deploy/test-support/stripe';
import { createWorld, userStatusChanged, type Tenant, type World } from './harness';

/**
 * The notifier's payment actions against Stripe's stripe-mock behind a recording proxy, with the user projection
 * written by the test: what happens when the status changes again before an action ran, or while it is in flight.
 */
const ENCRYPTION_KEY = randomBytes(32);
const STRIPE_KEY = `sk_test_${randomBytes(18).toString('hex')}`;

let world: World;
let stripe: StripeServer;

beforeAll(async () => {
  stripe = await startStripe();
  world = await createWorld();
  await world.start({
    SECRETS_ENCRYPTION_KEY: ENCRYPTION_KEY.toString('base64'),
    STRIPE_API_BASE_URL: stripe.url,
    PAYMENTS_TIMEOUT_MS: '5000',
    PAYMENTS_POLL_MS: '100',
    PAYMENTS_RETRY_SCHEDULE_S: '0.2,0.2,0.5,0.5,1,1,1,1,1,1',
  });
}, 180000);

afterAll(async () => {
  await world?.close();
  await stripe?.close();
});

async function withKey(tenant: Tenant): Promise<void> {
  const doc: PaymentKeyDoc = {
    _id: tenant.tenantId,
    provider: 'stripe',
    sealed: new SecretBox([ENCRYPTION_KEY]).seal(STRIPE_KEY, paymentKeyContext(tenant.tenantId)),
    hint: maskSecretKey(STRIPE_KEY),
    updatedAt: new Date(),
  };
  await world.db.collection<PaymentKeyDoc>(COLLECTIONS.paymentKeys).insertOne(doc);
}

const actionsOf = (userId: string) =>
  world.db.collection<PaymentActionDoc>(COLLECTIONS.paymentActions).find({ userId }).sort({ userVersion: 1 }).toArray();

const final = (userId: string, count: number) =>
  waitFor(
    async () => {
      const docs = await actionsOf(userId);
      return docs.length === count && docs.every((d) => d.state !== 'pending' && d.state !== 'sending')
        ? docs
        : undefined;
    },
    { what: `${count} finished payment actions` },
  );

const setUser = (userId: string, fields: Partial<UserDoc>) =>
  world.db.collection<UserDoc>(COLLECTIONS.users).updateOne({ _id: userId }, { $set: fields });

describe('payment actions', () => {
  it('does not send a pause that a later reinstatement turned around before it ran', async () => {
    const tenant = world.tenant();
    await withKey(tenant);
    const user = await tenant.user('s-1', { paymentsAccountId: 'acct_turned', status: 'Compliant', version: 3 });
    const pause = userStatusChanged(tenant, user, { status: 'Suspended', previousStatus: 'Compliant' });
    const resume = {
      ...userStatusChanged(tenant, user, { status: 'Compliant', previousStatus: 'Suspended' }),
      version: 3,
    };
    await world.publish(pause, resume);
    const [paused, resumed] = await final(user._id, 2);
    expect(paused).toMatchObject({ action: 'pause', state: 'superseded', attemptCount: 0 });
    expect(resumed).toMatchObject({ action: 'resume', state: 'succeeded', attemptCount: 1 });
    expect(stripe.callsFor('acct_turned').map((c) => c.form['risk_controls[charges][pause_requested]'])).toEqual([
      'false',
    ]);
  });

  it('waits for the user projection to reach the event before acting', async () => {
    const tenant = world.tenant();
    await withKey(tenant);
    // The projection still shows the user before the suspension (version 1) and without the account.
    const user = await tenant.user('s-2', { status: 'Compliant', version: 1 });
    await world.publish(userStatusChanged(tenant, user, { status: 'Suspended', previousStatus: 'Compliant' }));
    await waitFor(async () => ((await actionsOf(user._id))[0]?.attemptCount ?? 0) >= 1, { what: 'a first check' });
    expect((await actionsOf(user._id))[0]).toMatchObject({ state: 'pending', lastError: 'user_unavailable' });
    await setUser(user._id, { status: 'Suspended', version: 2, paymentsAccountId: 'acct_lagging' });
    const [action] = await final(user._id, 1);
    expect(action).toMatchObject({ state: 'succeeded', accountId: 'acct_lagging' });
    expect(stripe.callsFor('acct_lagging')).toHaveLength(1);
  });

  it('sends a resume only after the pause in flight for the same user was answered', async () => {
    const tenant = world.tenant();
    await withKey(tenant);
    const user = await tenant.user('s-3', { paymentsAccountId: 'acct_slow', status: 'Suspended', version: 2 });
    stripe.delayNext('acct_slow', 1500);
    await world.publish(userStatusChanged(tenant, user, { status: 'Suspended', previousStatus: 'Compliant' }));
    await waitFor(() => stripe.callsFor('acct_slow').length === 1, { what: 'the pause to reach Stripe' });
    await setUser(user._id, { status: 'Compliant', version: 3 });
    await world.publish({
      ...userStatusChanged(tenant, user, { status: 'Compliant', previousStatus: 'Suspended' }),
      version: 3,
    });
    const [paused, resumed] = await final(user._id, 2);
    expect([paused?.state, resumed?.state]).toEqual(['succeeded', 'succeeded']);
    const [pauseCall, resumeCall] = stripe.callsFor('acct_slow');
    expect(pauseCall!.form['risk_controls[charges][pause_requested]']).toBe('true');
    expect(resumeCall!.form['risk_controls[charges][pause_requested]']).toBe('false');
    expect(resumeCall!.receivedAt).toBeGreaterThanOrEqual(pauseCall!.answeredAt!);
  });

  it('skips an account id that is not a Stripe one, without calling', async () => {
    const tenant = world.tenant();
    await withKey(tenant);
    const user = await tenant.user('s-4', { paymentsAccountId: 'acct_1/../../v1/charges', status: 'Banned' });
    await world.publish(userStatusChanged(tenant, user, { status: 'Banned', previousStatus: null }));
    const [action] = await final(user._id, 1);
    expect(action).toMatchObject({ state: 'skipped', skipReason: 'invalid_account_id', attemptCount: 0 });
    expect(stripe.calls.filter((c) => c.path.includes('charges'))).toEqual([]);
  });
});
