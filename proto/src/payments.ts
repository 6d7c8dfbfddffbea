import { z } from 'zod';
import type { UserStatus } from './events';

/**
 * Payment enforcement (Iffy's Stripe step, §6 and §7.7): when a user with a payments account becomes Suspended or
 * Banned, charges on their Stripe connected account are paused; when they are reinstated, charges and payouts resume.
 * The gateway stores each tenant's Stripe key (sealed with SecretBox); the notifier performs the actions.
 */

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

/** How a stored key is shown: its kind and mode and its last four characters, never more. */
export function maskSecretKey(key: string): string {
  const prefix = /^[a-z]{2}_(test|live)_/.exec(key)?.[0] ?? '';
  return `${prefix}…${key.slice(-4)}`;
}

/** The SecretBox context of a tenant's payments key: a sealed key opens only for the tenant it was sealed for. */
export const paymentKeyContext = (tenantId: string): string => `payments:stripe:${tenantId}`;

/**
 * Collection `payment_keys`, written by the gateway only (`_id` = tenant id), read by the notifier. `sealed` is the
 * SecretBox of the key; `hint` is `maskSecretKey` of it, what the API shows.
 */
export interface PaymentKeyDoc {
  _id: string;
  provider: 'stripe';
  sealed: string;
  hint: string;
  updatedAt: Date;
}

export const PaymentAction = z.enum(['pause', 'resume']);
export type PaymentAction = z.infer<typeof PaymentAction>;

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

/** States of a payment action; `pending` and `sending` are the queue's, the others final. */
export const PaymentActionState = z.enum(['pending', 'sending', 'succeeded', 'failed', 'skipped', 'superseded']);
export type PaymentActionState = z.infer<typeof PaymentActionState>;

/** One call to Stripe (or a check that stood in for it). Stripe's error message is not kept, only its identifiers. */
export interface PaymentAttempt {
  at: Date;
  durationMs: number;
  /** HTTP status of Stripe's answer, when it answered. */
  statusCode?: number;
  /** `rate_limited`, `server_error`, `rejected`, `unauthorized`, `timeout`, `network_error`, `user_unavailable`, `key_unreadable`. */
  error?: string;
  stripeRequestId?: string;
  stripeErrorType?: string;
  stripeErrorCode?: string;
  idempotencyKey?: string;
}

/**
 * Collection `payment_actions`, written by the notifier only: one document per (UserStatusChanged event, user) of a
 * tenant with a payments key, which is also the audit trail the gateway serves. `_id` is derived from the event id,
 * so a re-consumed event acts once. The account id is read from the user when the action runs and kept here.
 */
export interface PaymentActionDoc {
  _id: string;
  tenantId: string;
  userId: string;
  eventId: string;
  /** Version of the user stream the event is at: the projection must have caught up before the action runs. */
  userVersion: number;
  action: PaymentAction;
  state: PaymentActionState;
  accountId?: string;
  /** Why nothing was sent (state `skipped`): `no_account`, `invalid_account_id`, `no_key`, `not_configured`. */
  skipReason?: string;
  attemptCount: number;
  attempts: PaymentAttempt[];
  dueAt: Date;
  /** The notifier's due-queue time bucket while pending or sending (internal). */
  due?: string;
  leaseUntil?: Date;
  leaseId?: string;
  lastError?: string;
  stripeRequestId?: string;
  completedAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}
