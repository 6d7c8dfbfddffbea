// Which payment action a user's status change calls for, and the Stripe account ids the notifier sends.
import type { PaymentAction, UserStatus } from '@vigil/proto';

/**
 * What a status change asks of the user's payments: Suspended or Banned pauses charges; Compliant after Suspended or
 * Banned resumes charges and payouts. A first Compliant (no earlier status) touches nothing: Vigil never paused it.
 */
export function paymentActionFor(status: UserStatus, previousStatus: UserStatus | null): PaymentAction | undefined {
  if (status === previousStatus) return undefined;
  if (status === 'Suspended' || status === 'Banned') return 'pause';
  if (status === 'Compliant' && (previousStatus === 'Suspended' || previousStatus === 'Banned')) return 'resume';
  return undefined;
}

/** Whether the user's current status still calls for the action (a later change may have turned it around). */
export function paymentActionStillDue(action: PaymentAction, status: UserStatus | undefined): boolean {
  return action === 'pause' ? status === 'Suspended' || status === 'Banned' : status === 'Compliant';
}

/** Stripe connected account ids; anything else is not sent (it would land in the request path). */
export const STRIPE_ACCOUNT_ID = /^acct_[0-9A-Za-z]{1,250}$/;
