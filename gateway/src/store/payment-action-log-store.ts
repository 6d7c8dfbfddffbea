import { COLLECTIONS, type PaymentActionDoc } from '@vigil/proto';
import type { Db } from 'mongodb';
import { UserLog, type LogCursor, type Page } from './user-log';

const HIDDEN = ['leaseId', 'leaseUntil', 'eventId', 'userVersion', 'dueAt', 'due'] as const;

/** A payment action as the API shows it: the notifier's document less its queue fields. */
export type PaymentActionRecord = Omit<PaymentActionDoc, (typeof HIDDEN)[number]>;

/** Reads a user's payment actions (the audit trail), newest first. */
export class PaymentActionLogStore {
  private readonly log: UserLog<PaymentActionDoc, (typeof HIDDEN)[number]>;

  constructor(db: Db) {
    this.log = new UserLog(db.collection<PaymentActionDoc>(COLLECTIONS.paymentActions), HIDDEN);
  }

  list(tenantId: string, userId: string, limit: number, cursor?: LogCursor): Promise<Page<PaymentActionRecord>> {
    return this.log.list(tenantId, userId, limit, cursor);
  }
}
