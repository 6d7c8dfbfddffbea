import { COLLECTIONS, type PaymentAction, type PaymentActionState } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';

/** The notifier's `payment_actions` documents as the API shows them (it owns the collection and its indexes). */
export interface PaymentActionRecord {
  _id: string;
  tenantId: string;
  userId: string;
  action: PaymentAction;
  state: PaymentActionState;
  accountId?: string;
  skipReason?: string;
  attemptCount: number;
  attempts: Array<{
    at: Date;
    durationMs: number;
    statusCode?: number;
    error?: string;
    stripeRequestId?: string;
    stripeErrorType?: string;
    stripeErrorCode?: string;
    idempotencyKey?: string;
  }>;
  lastError?: string;
  stripeRequestId?: string;
  completedAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** Reads a user's payment actions (the audit trail), newest first, through the notifier's `user_log` index. */
export class PaymentActionLogStore {
  private readonly actions: Collection<PaymentActionRecord>;

  constructor(db: Db) {
    this.actions = db.collection(COLLECTIONS.paymentActions);
  }

  async list(
    tenantId: string,
    userId: string,
    limit: number,
  ): Promise<{ docs: PaymentActionRecord[]; hasMore: boolean }> {
    const docs = await this.actions
      .find({ tenantId, userId }, { projection: { leaseId: 0, leaseUntil: 0, eventId: 0, userVersion: 0, dueAt: 0 } })
      .sort({ createdAt: -1 })
      .limit(limit + 1)
      .toArray();
    return { docs: docs.slice(0, limit), hasMore: docs.length > limit };
  }
}
