import { z } from 'zod';

/**
 * A Stripe secret (`sk_test_…`, `sk_live_…`) or restricted (`rk_test_…`, `rk_live_…`) key. A restricted key needs
 * write access to Connect accounts.
 */
export const StripeSecretKey = z
  .string()
  .max(255)
  .regex(
    /^(sk|rk)_(test|live)_[0-9A-Za-z]{16,247}$/,
    'must be a Stripe secret key (sk_test_…, sk_live_…) or restricted key (rk_test_…, rk_live_…)',
  );
