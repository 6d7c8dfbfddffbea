import { COLLECTIONS, type EmailMessageDoc } from '@vigil/proto';
import type { Db } from 'mongodb';
import { UserLog } from './user-log';

const HIDDEN = ['attempts', 'leaseId', 'leaseUntil', 'eventId', 'dueAt', 'due'] as const;

/** A user's email log, newest first: the notifier's documents less their attempts and queue fields. */
export type EmailLogStore = UserLog<EmailMessageDoc, (typeof HIDDEN)[number]>;

export const emailLogStore = (db: Db): EmailLogStore =>
  new UserLog(db.collection<EmailMessageDoc>(COLLECTIONS.emailMessages), HIDDEN);
