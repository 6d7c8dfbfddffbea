import {
  COLLECTIONS,
  type PaymentActionDoc,
  type PaymentAttempt,
  type PaymentKeyDoc,
  type UserDoc,
} from '@vigil/proto';
import type { Collection, Db } from 'mongodb';
import { DueQueue } from './due-queue';
import { attemptRecorded } from './job-finishes';
import type { DueQueueTiming } from './queued-doc';

export const paymentActionIdOf = (eventId: string): string => `pay_${eventId}`;

export type PaymentOutcome =
  | { state: 'pending'; dueAt: Date }
  | { state: 'succeeded'; stripeRequestId?: string }
  | { state: 'failed' | 'superseded' }
  | { state: 'skipped'; reason: string };

export class PaymentStore {
  readonly actions: Collection<PaymentActionDoc>;
  private readonly queue: DueQueue<PaymentActionDoc>;
  private readonly keys: Collection<PaymentKeyDoc>;
  private readonly users: Collection<UserDoc>;

  constructor(db: Db, timing: DueQueueTiming) {
    this.actions = db.collection(COLLECTIONS.paymentActions);
    this.queue = DueQueue.in(db, this.actions, COLLECTIONS.paymentLeases, timing);
    this.keys = db.collection(COLLECTIONS.paymentKeys);
    this.users = db.collection(COLLECTIONS.users);
  }

  async ensureIndexes(): Promise<void> {
    await this.queue.ensureIndexes();
    // The per-user audit trail the gateway serves (GET /users/{id}/payment-actions), and the in-flight check.
    await this.actions.createIndex({ tenantId: 1, userId: 1, createdAt: -1 }, { name: 'user_log' });
  }

  async hasKey(tenantId: string): Promise<boolean> {
    return (await this.keys.findOne({ _id: tenantId }, { projection: { _id: 1 } })) !== null;
  }

  keyOf(tenantId: string): Promise<PaymentKeyDoc | null> {
    return this.keys.findOne({ _id: tenantId });
  }

  userOf(userId: string): Promise<Pick<UserDoc, 'paymentsAccountId' | 'status' | 'version'> | null> {
    return this.users.findOne({ _id: userId }, { projection: { paymentsAccountId: 1, status: 1, version: 1 } });
  }

  /**
   * Whether an earlier action of the same user is being sent right now. The later one waits for it, so that Stripe
   * receives a pause and the resume that follows it in their order.
   */
  async earlierInFlight(doc: PaymentActionDoc): Promise<boolean> {
    const found = await this.actions.findOne(
      { tenantId: doc.tenantId, userId: doc.userId, state: 'sending', userVersion: { $lt: doc.userVersion } },
      { projection: { _id: 1 } },
    );
    return found !== null;
  }

  insertNew(doc: PaymentActionDoc): Promise<boolean> {
    return this.queue.insertNew(doc);
  }

  claim(now: Date, leaseMs: number, limit: number): Promise<PaymentActionDoc[]> {
    return this.queue.claim(now, leaseMs, limit);
  }

  /** Records the attempt (if one was made), the account id once known, and the outcome. */
  async finish(
    doc: PaymentActionDoc,
    attempt: PaymentAttempt | undefined,
    next: PaymentOutcome,
    accountId?: string,
  ): Promise<void> {
    const final = next.state !== 'pending';
    await this.queue.finish(doc, next, {
      ...attemptRecorded(attempt),
      $set: {
        ...(accountId !== undefined ? { accountId } : {}),
        ...(next.state === 'succeeded' && next.stripeRequestId ? { stripeRequestId: next.stripeRequestId } : {}),
        ...(next.state === 'skipped' ? { skipReason: next.reason } : {}),
        ...(attempt?.error !== undefined && next.state !== 'succeeded' ? { lastError: attempt.error } : {}),
        ...(final ? { completedAt: new Date() } : {}),
      },
    });
  }

  pruneLeases(before: Date): Promise<number> {
    return this.queue.pruneLeases(before);
  }
}
