import { StripeSecretKey } from './stripe-secret-key';

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
