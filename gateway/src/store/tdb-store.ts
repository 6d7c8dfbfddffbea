import {
  COLLECTIONS,
  tdbEnabledSince,
  tdbTokenContext,
  type SecretBox,
  type TdbConfigDoc,
  type TdbSettings,
  type TdbSubmissionDoc,
} from '@vigil/proto';
import { maskToken } from '../routes/transparency/tdb-token';
import { upsertRetried } from '@vigil/proto/platform';
import type { Collection, Db, Filter } from 'mongodb';
import { SecretsNotConfiguredError, ValidationError } from '../errors';
import type { ConfigVersionStore } from './config-version-store';

const HIDDEN = ['leaseId', 'leaseUntil', 'dueAt', 'due', 'batchId'] as const;
/** A submission as the API shows it: the notifier's document less its queue fields. */
export type TdbSubmissionRecord = Omit<TdbSubmissionDoc, (typeof HIDDEN)[number]>;

/** What the API shows of a tenant's submission settings: the token only as its hint. */
export type TdbSettingsView =
  ({ enabled: true; token: string; updatedAt: Date } & TdbSettings) | { enabled: false; token: null };

/**
 * Tenants' Transparency Database settings (`tdb_configs`, `_id` = tenant id) with the token sealed by the deployment's
 * SecretBox, like the Stripe key; and the notifier's submission log (`tdb_submissions`), read here.
 */
export class TdbStore {
  private readonly configs: Collection<TdbConfigDoc>;
  private readonly submissions: Collection<TdbSubmissionDoc>;

  /**
   * `configVersions`: raised by every change, so the notifier (which keeps the settings per configuration version)
   * submits what follows the answer by the new settings. `box`: absent when SECRETS_ENCRYPTION_KEY is unset;
   * submission can then be turned off but not on.
   */
  constructor(
    db: Db,
    private readonly configVersions: Pick<ConfigVersionStore, 'changed'>,
    private readonly box?: SecretBox,
  ) {
    this.configs = db.collection(COLLECTIONS.tdbConfigs);
    this.submissions = db.collection(COLLECTIONS.tdbSubmissions);
  }

  async view(tenantId: string): Promise<TdbSettingsView> {
    const doc = await this.configs.findOne({ _id: tenantId });
    if (!doc) return { enabled: false, token: null };
    return {
      enabled: true,
      token: doc.hint,
      baseUrl: doc.baseUrl,
      territorialScope: doc.territorialScope,
      defaults: doc.defaults,
      updatedAt: doc.updatedAt,
    };
  }

  /** Turns submission on or changes it; `token` absent keeps the stored one (there must be one). */
  async set(tenantId: string, settings: TdbSettings, token: string | undefined): Promise<TdbSettingsView> {
    if (!this.box) {
      throw new SecretsNotConfiguredError(
        'the token cannot be stored: this deployment has no SECRETS_ENCRYPTION_KEY to encrypt it with',
      );
    }
    const stored = await this.configs.findOne(
      { _id: tenantId },
      { projection: { sealed: 1, hint: 1, enabledAt: 1, updatedAt: 1 } },
    );
    let sealed: { sealed: string; hint: string };
    if (token !== undefined) {
      sealed = { sealed: this.box.seal(token, tdbTokenContext(tenantId)), hint: maskToken(token) };
    } else {
      if (!stored) {
        throw new ValidationError('invalid settings', [
          { path: ['token'], message: 'the token is required to turn submission on' },
        ]);
      }
      sealed = { sealed: stored.sealed, hint: stored.hint };
    }
    const now = new Date();
    // Decisions made from the moment submission is turned on are submitted; a change of settings keeps that moment.
    const enabledAt = stored ? tdbEnabledSince(stored) : now;
    const doc: Omit<TdbConfigDoc, '_id'> = { ...settings, ...sealed, enabledAt, updatedAt: now };
    await upsertRetried(() => this.configs.replaceOne({ _id: tenantId }, doc, { upsert: true }));
    await this.configVersions.changed(tenantId);
    return this.view(tenantId);
  }

  /** Turns submission off: statements not yet sent are recorded as skipped when their turn comes. */
  async clear(tenantId: string): Promise<void> {
    await this.configs.deleteOne({ _id: tenantId });
    await this.configVersions.changed(tenantId);
  }

  /**
   * The tenant's submissions, newest first, optionally of one subject (a record or user id). `undefined` when the cursor
   * is not a submission of this tenant.
   */
  async list(
    tenantId: string,
    limit: number,
    options: { startingAfter?: string; subjectId?: string } = {},
  ): Promise<{ docs: TdbSubmissionRecord[]; hasMore: boolean } | undefined> {
    const filter: Filter<TdbSubmissionDoc> = { tenantId };
    if (options.subjectId) filter['subject.id'] = options.subjectId;
    if (options.startingAfter) {
      const cursor = await this.submissions.findOne(
        { _id: options.startingAfter, tenantId },
        { projection: { createdAt: 1 } },
      );
      if (!cursor) return undefined;
      filter.$or = [
        { createdAt: { $lt: cursor.createdAt } },
        { createdAt: cursor.createdAt, _id: { $lt: options.startingAfter } },
      ];
    }
    const docs = await this.submissions
      .find<TdbSubmissionRecord>(filter, { projection: Object.fromEntries(HIDDEN.map((field) => [field, 0])) })
      .sort({ createdAt: -1, _id: -1 })
      .limit(limit + 1)
      .toArray();
    return { docs: docs.slice(0, limit), hasMore: docs.length > limit };
  }

  get(tenantId: string, id: string): Promise<TdbSubmissionRecord | null> {
    return this.submissions.findOne<TdbSubmissionRecord>(
      { _id: id, tenantId },
      { projection: Object.fromEntries(HIDDEN.map((field) => [field, 0])) },
    );
  }
}
