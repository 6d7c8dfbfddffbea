import { z } from 'zod';

/**
 * Payment enforcement (Iffy's Stripe step, §6 and §7.7): when a user with a payments account becomes Suspended or
 * Banned, charges on their Stripe connected account are paused; when they are reinstated, charges and payouts resume.
 * The gateway stores each tenant's Stripe key (sealed with SecretBox); the notifier performs the actions.
 */

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
