import { paymentActionFor, paymentActionStillDue, STRIPE_ACCOUNT_ID } from './payment-rules';

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
