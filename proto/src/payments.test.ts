import { maskSecretKey, paymentActionFor, paymentActionStillDue, STRIPE_ACCOUNT_ID, StripeSecretKey } from './payments';

const tail = 'a'.repeat(20) + 'Zz09';

describe('StripeSecretKey', () => {
  it.each([`sk_test_${tail}`, `sk_live_${tail}`, `rk_test_${tail}`, `rk_live_${tail}`])('accepts %s', (key) => {
    expect(StripeSecretKey.safeParse(key).success).toBe(true);
  });

  it.each([
    ['a publishable key', `pk_live_${tail}`],
    ['a webhook secret', `whsec_${tail}`],
    ['no mode', `sk_${tail}`],
    ['a short key', 'sk_test_abc'],
    ['a key with a space', `sk_test_${tail} x`],
    ['a key with a line break', `sk_test_${tail}\n`],
    ['a key over 255 characters', `sk_test_${'a'.repeat(248)}`],
  ])('refuses %s', (_name, key) => {
    expect(StripeSecretKey.safeParse(key).success).toBe(false);
  });
});

describe('maskSecretKey', () => {
  it('keeps the kind, the mode and the last four characters only', () => {
    expect(maskSecretKey(`sk_live_${tail}`)).toBe('sk_live_…Zz09');
    expect(maskSecretKey(`rk_test_${tail}`)).toBe('rk_test_…Zz09');
  });
});

describe('paymentActionFor', () => {
  it.each([
    ['Suspended', null, 'pause'],
    ['Suspended', 'Compliant', 'pause'],
    ['Banned', 'Suspended', 'pause'],
    ['Banned', null, 'pause'],
    ['Compliant', 'Suspended', 'resume'],
    ['Compliant', 'Banned', 'resume'],
    ['Compliant', null, undefined],
    // A status confirmed by hand: nothing to do.
    ['Suspended', 'Suspended', undefined],
    ['Banned', 'Banned', undefined],
  ] as const)('%s after %s → %s', (status, previous, expected) => {
    expect(paymentActionFor(status, previous)).toBe(expected);
  });
});

describe('paymentActionStillDue', () => {
  it.each([
    ['pause', 'Suspended', true],
    ['pause', 'Banned', true],
    ['pause', 'Compliant', false],
    ['resume', 'Compliant', true],
    ['resume', 'Suspended', false],
    ['resume', undefined, false],
  ] as const)('%s while %s → %s', (action, status, expected) => {
    expect(paymentActionStillDue(action, status)).toBe(expected);
  });
});

describe('STRIPE_ACCOUNT_ID', () => {
  it.each([
    ['acct_1Nv0FGQ9RKHgCVdK', true],
    ['acct_', false],
    ['acct_1/../../v1/charges', false],
    ['cus_123', false],
    ['acct_12?x=1', false],
  ])('%s → %s', (id, expected) => {
    expect(STRIPE_ACCOUNT_ID.test(id)).toBe(expected);
  });
});
