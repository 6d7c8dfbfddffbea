import { COLLECTIONS, type EmailKind } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';

/** The fields of the notifier's `email_messages` documents the API shows (it owns the collection and its indexes). */
export interface EmailMessageView {
  _id: string;
  tenantId: string;
  userId: string;
  kind: EmailKind;
  state: 'pending' | 'sending' | 'sent' | 'failed' | 'skipped';
  skipReason?: string;
  attemptCount: number;
  lastError?: string;
  sentAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** Reads a user's email log, newest first, through the notifier's `user_log` index. */
export class EmailLogStore {
  private readonly messages: Collection<EmailMessageView>;

  constructor(db: Db) {
    this.messages = db.collection(COLLECTIONS.emailMessages);
  }

  async list(tenantId: string, userId: string, limit: number): Promise<{ docs: EmailMessageView[]; hasMore: boolean }> {
    const docs = await this.messages
      .find({ tenantId, userId }, { projection: { attempts: 0, leaseId: 0, leaseUntil: 0, eventId: 0 } })
      .sort({ createdAt: -1 })
      .limit(limit + 1)
      .toArray();
    return { docs: docs.slice(0, limit), hasMore: docs.length > limit };
  }
}
