import {
  paymentKeyContext,
  type DomainEvent,
  type DomainEventType,
  type PaymentActionDoc,
  type PaymentAttempt,
  type SecretBox,
} from '@vigil/proto';
import { paymentActionFor, paymentActionStillDue, STRIPE_ACCOUNT_ID } from './payment-rules';
import type { Logger } from 'pino';
import { DueJobs, dueNow, type DueJobsSettings } from '../queue/due-jobs';
import { paymentActionIdOf, type PaymentStore } from '../store/payment-store';
import type { StripeClient } from './stripe-client';

export interface PaymentActionsOptions extends DueJobsSettings {
  store: PaymentStore;
  client: StripeClient;
  /** Opens tenants' keys (SECRETS_ENCRYPTION_KEY); absent: actions are recorded as skipped, `not_configured`. */
  secrets?: SecretBox;
  /** An attempt's result (`succeeded` or its error), for metrics. */
  onAttempt?: (result: string) => void;
}

/** The events `plan` reads: a user's status change. */
export const PAYMENT_EVENT_TYPES: readonly DomainEventType[] = ['UserStatusChanged'];

/** How long an action waits when an earlier one of the same user is being sent, milliseconds (no attempt counted). */
const WAIT_FOR_EARLIER_MS = 500;

/**
 * Payment enforcement on status changes (Iffy §6 `update-stripe-payments-payouts`): Suspended or Banned pauses charges
 * on the user's Stripe connected account, Compliant after either resumes charges and payouts. Planned by the events
 * consumer before it commits (one document per event, derived `_id`), run as DueJobs over a durable queue like the
 * user emails, so retries wait in MongoDB and a restart loses nothing. Each document is the action's audit trail.
 */
export class PaymentActions {
  private readonly jobs: DueJobs<PaymentActionDoc>;

  constructor(private readonly options: PaymentActionsOptions) {
    this.jobs = new DueJobs({ ...options, run: (doc) => this.process(doc), close: () => options.client.close() });
  }

  /**
   * Records the actions these events call for, for tenants that stored a payments key (the others: nothing, no call);
   * idempotent. Throws on a database failure (the batch is retried).
   */
  async plan(events: DomainEvent[]): Promise<void> {
    const { store, log, secrets } = this.options;
    const keyed = new Map<string, Promise<boolean>>();
    let created = 0;
    for (const event of events) {
      if (event.type !== 'UserStatusChanged' || event.data.testMode) continue;
      const action = paymentActionFor(event.data.status, event.data.previousStatus);
      if (!action) continue;
      if (!keyed.has(event.tenantId)) keyed.set(event.tenantId, store.hasKey(event.tenantId));
      if (!(await keyed.get(event.tenantId))) continue;
      const now = new Date();
      const doc: PaymentActionDoc = {
        _id: paymentActionIdOf(event.id),
        tenantId: event.tenantId,
        userId: event.data.userId,
        eventId: event.id,
        userVersion: event.version,
        action,
        state: secrets ? 'pending' : 'skipped',
        ...(secrets ? {} : { skipReason: 'not_configured', completedAt: now }),
        ...dueNow(now),
      };
      if (await store.insertNew(doc)) created += 1;
      if (!secrets) {
        log.warn({ eventId: event.id, tenantId: event.tenantId }, 'payment action skipped: no SECRETS_ENCRYPTION_KEY');
      }
    }
    if (created > 0) this.jobs.wake();
  }

  start(): void {
    if (!this.options.secrets) return;
    this.jobs.start();
  }

  stop(): Promise<void> {
    return this.jobs.stop();
  }

  private async process(doc: PaymentActionDoc): Promise<void> {
    const { store, client, secrets } = this.options;
    const log = this.options.log.child({ actionId: doc._id, tenantId: doc.tenantId, userId: doc.userId });
    if (await store.earlierInFlight(doc)) {
      await store.finish(doc, undefined, { state: 'pending', dueAt: new Date(Date.now() + WAIT_FOR_EARLIER_MS) });
      return;
    }
    const user = await store.userOf(doc.userId);
    if (!user || user.version < doc.userVersion) {
      // The projection lags its event only briefly; the schedule gives it time.
      await this.failed(doc, { at: new Date(), durationMs: 0, error: 'user_unavailable' }, true, log);
      return;
    }
    // A later status change turned this one around (a resume queued behind a pause that is still retrying): acting
    // now would undo the later action, which has its own document.
    if (!paymentActionStillDue(doc.action, user.status)) {
      await store.finish(doc, undefined, { state: 'superseded' });
      log.info({ action: doc.action }, 'payment action superseded by a later status change');
      return;
    }
    const accountId = user.paymentsAccountId;
    if (!accountId) return this.skip(doc, 'no_account', log);
    if (!STRIPE_ACCOUNT_ID.test(accountId)) return this.skip(doc, 'invalid_account_id', log, accountId);
    const key = await store.keyOf(doc.tenantId);
    // Cleared since the action was planned.
    if (!key) return this.skip(doc, 'no_key', log, accountId);
    const opened = secrets!.open(key.sealed, paymentKeyContext(doc.tenantId));
    if (!opened.ok) {
      // Sealed with a key this deployment no longer lists: retried, in case the operator puts it back.
      log.error({ problem: opened.problem }, 'payments key cannot be opened (SECRETS_ENCRYPTION_KEY)');
      await this.failed(doc, { at: new Date(), durationMs: 0, error: 'key_unreadable' }, true, log, accountId);
      return;
    }
    // One idempotency key per action, so a retry after a lost answer cannot act twice. Stripe replays the saved
    // answer of a key, 5xx included, so each 5xx answer moves the action on to a fresh key; setting a flag twice is
    // harmless.
    const generation = doc.attempts.filter((a) => (a.statusCode ?? 0) >= 500).length;
    const idempotencyKey = `vigil_${doc._id}_${generation}`;
    const at = new Date();
    const result = await client.apply({ secretKey: opened.plaintext, accountId, action: doc.action, idempotencyKey });
    const attempt: PaymentAttempt = {
      at,
      durationMs: result.durationMs,
      idempotencyKey,
      ...(result.statusCode !== undefined ? { statusCode: result.statusCode } : {}),
      ...(result.error !== undefined ? { error: result.error } : {}),
      ...(result.requestId !== undefined ? { stripeRequestId: result.requestId } : {}),
      ...(result.stripeErrorType !== undefined ? { stripeErrorType: result.stripeErrorType } : {}),
      ...(result.stripeErrorCode !== undefined ? { stripeErrorCode: result.stripeErrorCode } : {}),
    };
    if (result.ok) {
      this.options.onAttempt?.('succeeded');
      await store.finish(doc, attempt, { state: 'succeeded', stripeRequestId: result.requestId }, accountId);
      log.info(
        { action: doc.action, stripeRequestId: result.requestId, durationMs: result.durationMs },
        'payment action succeeded',
      );
      return;
    }
    await this.failed(doc, attempt, result.retriable, log, accountId, result.retryAfterMs);
  }

  private async skip(doc: PaymentActionDoc, reason: string, log: Logger, accountId?: string): Promise<void> {
    await this.options.store.finish(doc, undefined, { state: 'skipped', reason }, accountId);
    log.info({ action: doc.action, reason }, 'payment action skipped');
  }

  private async failed(
    doc: PaymentActionDoc,
    attempt: PaymentAttempt,
    retriable: boolean,
    log: Logger,
    accountId?: string,
    retryAfterMs?: number,
  ): Promise<void> {
    this.options.onAttempt?.(attempt.error ?? 'error');
    const next = this.jobs.afterFailure(doc.attemptCount + 1, retriable, retryAfterMs);
    await this.options.store.finish(doc, attempt, next, accountId);
    const fields = {
      action: doc.action,
      error: attempt.error,
      statusCode: attempt.statusCode,
      stripeErrorCode: attempt.stripeErrorCode,
      stripeRequestId: attempt.stripeRequestId,
    };
    if (next.state === 'failed') log.warn({ ...fields, attempts: doc.attemptCount + 1 }, 'payment action failed');
    else log.info({ ...fields, delayMs: next.delayMs }, 'payment action attempt failed, retrying');
  }
}
