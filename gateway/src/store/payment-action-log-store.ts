import { COLLECTIONS, type PaymentActionDoc } from '@vigil/proto';
import type { Db } from 'mongodb';
import { UserLog } from './user-log';

const HIDDEN = ['leaseId', 'leaseUntil', 'eventId', 'userVersion', 'dueAt', 'due'] as const;

/** A payment action as the API shows it: the notifier's document less its queue fields. */
export type PaymentActionRecord = Omit<PaymentActionDoc, (typeof HIDDEN)[number]>;

/** A user's payment actions (the audit trail), newest first. */
export type PaymentActionLogStore = UserLog<PaymentActionDoc, (typeof HIDDEN)[number]>;

export const paymentActionLogStore = (db: Db): PaymentActionLogStore =>
  new UserLog(db.collection<PaymentActionDoc>(COLLECTIONS.paymentActions), HIDDEN);
