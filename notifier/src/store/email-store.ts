import {
  COLLECTIONS,
  DEFAULT_SETTINGS,
  TenantSettings,
  type EmailKind,
  type TenantSettings as TenantSettingsType,
  type UserDoc,
} from '@vigil/proto';
import { MongoServerError, type Collection, type Db } from 'mongodb';

export type EmailState = 'pending' | 'sending' | 'sent' | 'failed' | 'skipped';

/** One SMTP attempt. No address, subject or server text: a server's reply often quotes the recipient. */
export interface EmailAttempt {
  at: Date;
  durationMs: number;
  /** SMTP reply code, when the server answered. */
  responseCode?: number;
  /** `rejected`, `deferred`, `timeout`, `network_error`, `auth_failed`, `user_unavailable`. */
  error?: string;
}

/**
 * Collection `email_messages`, written by the notifier only: one document per (UserStatusChanged event, user). The
 * event names one user, so `_id` is derived from the event id and a re-consumed event inserts nothing new. Holds no
 * address and no content: the address is read from the user at send time, the content rendered then.
 */
export interface EmailMessageDoc {
  _id: string;
  tenantId: string;
  userId: string;
  eventId: string;
  kind: EmailKind;
  state: EmailState;
  /** Why nothing was sent (state `skipped`): `no_email`, `not_configured`. */
  skipReason?: string;
  attemptCount: number;
  attempts: EmailAttempt[];
  dueAt: Date;
  leaseUntil?: Date;
  leaseId?: string;
  lastError?: string;
  sentAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

interface EmailLeaseDoc {
  _id: string;
  createdAt: Date;
}

type SettingsDoc = { _id: string } & Partial<TenantSettingsType>;

export const emailMessageIdOf = (eventId: string): string => `eml_${eventId}`;

export class EmailStore {
  readonly messages: Collection<EmailMessageDoc>;
  private readonly leases: Collection<EmailLeaseDoc>;
  private readonly settings: Collection<SettingsDoc>;
  private readonly users: Collection<UserDoc>;
  private readonly tenants: Collection<{ _id: string; name: string }>;

  constructor(db: Db) {
    this.messages = db.collection(COLLECTIONS.emailMessages);
    this.leases = db.collection(COLLECTIONS.emailLeases);
    this.settings = db.collection(COLLECTIONS.settings);
    this.users = db.collection(COLLECTIONS.users);
    this.tenants = db.collection(COLLECTIONS.tenants);
  }

  async ensureIndexes(): Promise<void> {
    await this.messages.createIndex({ state: 1, dueAt: 1 }, { name: 'due' });
    // The per-user log the gateway serves (GET /users/{id}/emails).
    await this.messages.createIndex({ tenantId: 1, userId: 1, createdAt: -1 }, { name: 'user_log' });
    await this.leases.createIndex({ createdAt: 1 }, { name: 'created' });
  }

  async settingsOf(tenantId: string): Promise<TenantSettingsType> {
    const doc = await this.settings.findOne({ _id: tenantId });
    if (!doc) return DEFAULT_SETTINGS;
    const parsed = TenantSettings.safeParse({ ...doc, _id: undefined });
    return parsed.success ? parsed.data : DEFAULT_SETTINGS;
  }

  userOf(userId: string): Promise<Pick<UserDoc, 'email' | 'name' | 'username'> | null> {
    return this.users.findOne({ _id: userId }, { projection: { email: 1, name: 1, username: 1 } });
  }

  async tenantNameOf(tenantId: string): Promise<string | undefined> {
    return (await this.tenants.findOne({ _id: tenantId }, { projection: { name: 1 } }))?.name;
  }

  /** Inserts the message unless it exists (a re-consumed event); true if this call inserted it. */
  async insertNew(doc: EmailMessageDoc): Promise<boolean> {
    try {
      await this.messages.insertOne(doc);
      return true;
    } catch (err) {
      if (err instanceof MongoServerError && err.code === 11000) return false;
      throw err;
    }
  }

  /**
   * Takes due messages, and ones whose worker's lease expired. As for deliveries, exclusivity comes from a unique
   * `_id` insert into `email_leases` (conditional updates are not atomic on FerretDB v1): the key names the message
   * and its due time, plus the expired lease's end for a take-over, so a candidate read before another worker's
   * attempt was recorded finds its key taken.
   */
  async claim(now: Date, leaseMs: number, limit: number): Promise<EmailMessageDoc[]> {
    const pending = await this.messages
      .find({ state: 'pending', dueAt: { $lte: now } })
      .sort({ dueAt: 1 })
      .limit(limit)
      .toArray();
    const expired = await this.messages
      .find({ state: 'sending', leaseUntil: { $lte: now } })
      .limit(limit)
      .toArray();
    const leaseUntil = new Date(now.getTime() + leaseMs);
    const claimed: EmailMessageDoc[] = [];
    for (const doc of [...pending, ...expired].slice(0, limit)) {
      const takeover = doc.state === 'sending' ? `~${doc.leaseUntil?.getTime() ?? 0}` : '';
      const leaseId = `${doc._id}@${doc.dueAt.getTime()}${takeover}`;
      try {
        await this.leases.insertOne({ _id: leaseId, createdAt: now });
      } catch (err) {
        if (err instanceof MongoServerError && err.code === 11000) continue;
        throw err;
      }
      if (takeover) {
        // The original worker may have recorded its attempt since the candidate was read.
        const current = await this.messages.findOne({ _id: doc._id });
        if (current?.state !== 'sending' || current.leaseUntil?.getTime() !== doc.leaseUntil?.getTime()) continue;
      }
      await this.messages.updateOne(
        { _id: doc._id },
        { $set: { state: 'sending', leaseUntil, leaseId, updatedAt: now } },
      );
      claimed.push({ ...doc, state: 'sending', leaseUntil, leaseId });
    }
    return claimed;
  }

  /** Records an attempt (if one was made) and the outcome: `pending` again at `dueAt`, or final. */
  async finish(
    doc: EmailMessageDoc,
    attempt: EmailAttempt | undefined,
    next: { state: 'pending'; dueAt: Date } | { state: 'sent' | 'failed' } | { state: 'skipped'; reason: string },
  ): Promise<void> {
    const now = new Date();
    const lastError = next.state === 'sent' || next.state === 'skipped' ? undefined : attempt?.error;
    await this.messages.updateOne(
      { _id: doc._id, leaseId: doc.leaseId },
      {
        ...(attempt ? { $push: { attempts: attempt }, $inc: { attemptCount: 1 } } : {}),
        $set: {
          state: next.state,
          ...(next.state === 'pending' ? { dueAt: next.dueAt } : {}),
          ...(next.state === 'sent' ? { sentAt: now } : {}),
          ...(next.state === 'skipped' ? { skipReason: next.reason } : {}),
          ...(lastError !== undefined ? { lastError } : {}),
          updatedAt: now,
        },
        $unset: { leaseUntil: '', leaseId: '' },
      },
    );
  }

  async pruneLeases(before: Date): Promise<number> {
    return (await this.leases.deleteMany({ createdAt: { $lt: before } })).deletedCount;
  }
}
