import { SecretBox } from '@vigil/proto';
import type { Config } from '../config';
import { counterIn, indexed, type NotifierModule, type NotifierParts } from '../notifier-module';
import { PaymentStore } from '../store/payment-store';
import { PAYMENT_EVENT_TYPES, PaymentActions } from './payment-actions';
import { createStripeClient } from './stripe-client';

export type PaymentsConfig = Pick<
  Config,
  | 'DELIVERY_WORKER_ENABLED'
  | 'DELIVERY_LEASE_MARGIN_MS'
  | 'SECRETS_ENCRYPTION_KEY'
  | 'STRIPE_API_BASE_URL'
  | 'PAYMENTS_TIMEOUT_MS'
  | 'PAYMENTS_RETRY_SCHEDULE_S'
  | 'PAYMENTS_CONCURRENCY'
  | 'PAYMENTS_POLL_MS'
>;

/**
 * Payment actions on status changes: planned like the emails by whichever instance consumes the event (its reaction),
 * run by every instance whose delivery worker runs.
 */
export async function paymentsModule(config: PaymentsConfig, parts: NotifierParts): Promise<NotifierModule> {
  const { log } = parts;
  const store = await indexed(parts, 'payment indexes', new PaymentStore(parts.db, parts.timing));
  const attempts = counterIn(
    parts,
    'notifier_payment_actions_total',
    'Payment action attempts (Stripe calls and the checks standing in for them) by result',
  );
  const payments = new PaymentActions({
    store,
    client: createStripeClient({ baseUrl: config.STRIPE_API_BASE_URL, timeoutMs: config.PAYMENTS_TIMEOUT_MS }),
    ...(config.SECRETS_ENCRYPTION_KEY ? { secrets: new SecretBox(config.SECRETS_ENCRYPTION_KEY) } : {}),
    log: log.child({ component: 'payments' }),
    retryScheduleS: config.PAYMENTS_RETRY_SCHEDULE_S,
    pollMs: config.PAYMENTS_POLL_MS,
    leaseMs: config.PAYMENTS_TIMEOUT_MS + config.DELIVERY_LEASE_MARGIN_MS,
    concurrency: config.PAYMENTS_CONCURRENCY,
    onAttempt: (result) => attempts?.inc({ result }),
  });
  return {
    name: 'payments',
    reactions: [{ name: 'payments', applicableEvents: PAYMENT_EVENT_TYPES, react: (events) => payments.plan(events) }],
    start: () => {
      if (config.DELIVERY_WORKER_ENABLED) payments.start();
    },
    drain: () => payments.stop(),
  };
}
