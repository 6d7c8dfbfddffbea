import type { Collection, Db } from 'mongodb';
import {
  COLLECTIONS,
  DEFAULT_RULES,
  DEFAULT_SETTINGS,
  RuleSet,
  TenantSettings,
  type RuleSet as RuleSetType,
  type EmailKind,
  type EmailTemplate,
  type TenantSettings as TenantSettingsType,
} from '@vigil/proto';

interface RulesDoc {
  _id: string; // tenant id
  rules: RuleSetType['rules'];
  updatedAt: Date;
}

type SettingsDoc = { _id: string; updatedAt: Date } & Partial<TenantSettingsType>;

/** A settings change: absent fields keep their value; a `null` email template goes back to the default. */
export interface SettingsPatch {
  suspensionThreshold?: number;
  testMode?: boolean;
  rolloutPercentage?: number;
  emails?: { enabled?: boolean; templates?: Partial<Record<EmailKind, EmailTemplate | null>> };
}

/** Per-tenant rule sets and settings (`_id` = tenant id), read by the moderator. */
export class ConfigStore {
  private readonly rules: Collection<RulesDoc>;
  private readonly settings: Collection<SettingsDoc>;
  private readonly cached = new Map<string, { at: number; value: Promise<TenantSettingsType> }>();

  /** `cacheTtlMs`: how long `cachedSettings` may answer from memory (the hot ingest path), milliseconds. */
  constructor(
    db: Db,
    private readonly cacheTtlMs = 5000,
  ) {
    this.rules = db.collection(COLLECTIONS.rules);
    this.settings = db.collection(COLLECTIONS.settings);
  }

  async getRules(tenantId: string): Promise<RuleSetType> {
    const doc = await this.rules.findOne({ _id: tenantId });
    if (!doc) return DEFAULT_RULES;
    const parsed = RuleSet.safeParse({ rules: doc.rules });
    return parsed.success ? parsed.data : DEFAULT_RULES;
  }

  async putRules(tenantId: string, ruleSet: RuleSetType): Promise<void> {
    await this.rules.replaceOne({ _id: tenantId }, { rules: ruleSet.rules, updatedAt: new Date() }, { upsert: true });
  }

  async getSettings(tenantId: string): Promise<TenantSettingsType> {
    const doc = await this.settings.findOne({ _id: tenantId }, { projection: { _id: 0, updatedAt: 0 } });
    if (!doc) return DEFAULT_SETTINGS;
    const parsed = TenantSettings.safeParse(doc);
    return parsed.success ? parsed.data : DEFAULT_SETTINGS;
  }

  /**
   * Settings read at most once per `cacheTtlMs` per tenant, concurrent misses sharing one read: ingest reads the
   * roll-out percentage on every request. A change made through another gateway replica shows within the TTL.
   */
  cachedSettings(tenantId: string): Promise<TenantSettingsType> {
    const now = Date.now();
    const hit = this.cached.get(tenantId);
    if (hit && now - hit.at < this.cacheTtlMs) return hit.value;
    const value = this.getSettings(tenantId);
    this.cached.set(tenantId, { at: now, value });
    value.catch(() => this.cached.delete(tenantId));
    if (this.cached.size > 10_000) {
      for (const [id, entry] of this.cached) if (now - entry.at >= this.cacheTtlMs) this.cached.delete(id);
    }
    return value;
  }

  /** Sets the given fields only (nested ones by dotted path); the others keep their stored value or default. */
  async patchSettings(tenantId: string, patch: SettingsPatch): Promise<TenantSettingsType> {
    const set: Record<string, unknown> = { updatedAt: new Date() };
    const unset: Record<string, ''> = {};
    if (patch.suspensionThreshold !== undefined) set.suspensionThreshold = patch.suspensionThreshold;
    if (patch.testMode !== undefined) set.testMode = patch.testMode;
    if (patch.rolloutPercentage !== undefined) set.rolloutPercentage = patch.rolloutPercentage;
    if (patch.emails?.enabled !== undefined) set['emails.enabled'] = patch.emails.enabled;
    for (const [kind, template] of Object.entries(patch.emails?.templates ?? {})) {
      if (template === null) unset[`emails.templates.${kind}`] = '';
      else if (template !== undefined) set[`emails.templates.${kind}`] = template;
    }
    await this.settings.updateOne(
      { _id: tenantId },
      { $set: set, ...(Object.keys(unset).length > 0 ? { $unset: unset } : {}) },
      { upsert: true },
    );
    this.cached.delete(tenantId);
    return this.getSettings(tenantId);
  }
}
