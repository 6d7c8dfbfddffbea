import { COLLECTIONS, type EmailMessageDoc } from '@vigil/proto';
import type { Db } from 'mongodb';
import { UserLog, type LogCursor, type Page } from './user-log';

const HIDDEN = ['attempts', 'leaseId', 'leaseUntil', 'eventId', 'dueAt', 'due'] as const;

/** An email as the API shows it: the notifier's document less its attempts and queue fields. */
export type EmailMessageView = Omit<EmailMessageDoc, (typeof HIDDEN)[number]>;

/** Reads a user's email log, newest first. */
export class EmailLogStore {
  private readonly log: UserLog<EmailMessageDoc, (typeof HIDDEN)[number]>;

  constructor(db: Db) {
    this.log = new UserLog(db.collection<EmailMessageDoc>(COLLECTIONS.emailMessages), HIDDEN);
  }

  list(tenantId: string, userId: string, limit: number, cursor?: LogCursor): Promise<Page<EmailMessageView>> {
    return this.log.list(tenantId, userId, limit, cursor);
  }
}
