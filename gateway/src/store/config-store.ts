import type { Db } from 'mongodb';
import {
  COLLECTIONS,
  DEFAULT_RULES,
  DEFAULT_SETTINGS,
  StoredRuleSet,
  TenantSettings,
  type RuleSet as RuleSetType,
  type EmailKind,
  type EmailTemplate,
  type TenantSettings as TenantSettingsType,
  type TenantVersions,
} from '@vigil/proto';
import type { ConfigVersionStore } from './config-version-store';
import { RevisedDocs, type Revised } from './revised-docs';

interface RulesContent {
  rules: RuleSetType['rules'];
}

type SettingsContent = Partial<TenantSettingsType>;

/** A settings change: absent fields keep their value; a `null` email template goes back to the default. */
export interface SettingsPatch {
  suspensionThreshold?: number;
  testMode?: boolean;
  rolloutPercentage?: number;
  emails?: { enabled?: boolean; templates?: Partial<Record<EmailKind, EmailTemplate | null>> };
}

/**
 * Per-tenant rule sets and settings (`_id` = tenant id), read by the moderator. Every change is a new revision
 * (RevisedDocs), so concurrent changes (two presets added at once, two settings patched at once) all land, and raises
 * the tenant's configuration version before it returns (the moderator reloads on a newer one).
 */
export class ConfigStore {
  private readonly rules: RevisedDocs<RulesContent>;
  private readonly settings: RevisedDocs<SettingsContent>;
  private readonly cached = new Map<string, { at: number; version: number; value: Promise<TenantSettingsType> }>();

  /**
   * `cacheTtlMs`: how long `cachedSettings` may answer from memory (the hot ingest path), milliseconds, unless a
   * newer configuration version of the tenant is known (`versions`) first.
   */
  constructor(
    db: Db,
    private readonly configVersions: ConfigVersionStore,
    private readonly versions: TenantVersions,
    private readonly cacheTtlMs = 1000,
  ) {
    this.rules = new RevisedDocs(db, COLLECTIONS.rules);
    this.settings = new RevisedDocs(db, COLLECTIONS.settings);
  }

  async getRules(tenantId: string): Promise<RuleSetType> {
    return rulesOf(await this.rules.get(tenantId));
  }

  async putRules(tenantId: string, ruleSet: RuleSetType): Promise<void> {
    await this.rules.revise(tenantId, () => ({ rules: ruleSet.rules }));
    await this.configVersions.changed(tenantId);
  }

  /**
   * Changes the rule set from its current state: `change` may run more than once (when another change landed first)
   * and may throw to refuse. Returns the rule set stored.
   */
  async changeRules(tenantId: string, change: (current: RuleSetType) => RuleSetType): Promise<RuleSetType> {
    const stored = await this.rules.revise(tenantId, (current) => ({ rules: change(rulesOf(current)).rules }));
    await this.configVersions.changed(tenantId);
    return { rules: stored.rules };
  }

  async getSettings(tenantId: string): Promise<TenantSettingsType> {
    return settingsOf(contentOf(await this.settings.get(tenantId)));
  }

  /**
   * Settings read at most once per `cacheTtlMs` per tenant, concurrent misses sharing one read: ingest reads the
   * roll-out percentage on every request. A change made through this replica applies at once (its version is known
   * here); one made through another replica once this one knows its version (its next key read), or within the TTL.
   */
  cachedSettings(tenantId: string): Promise<TenantSettingsType> {
    const now = Date.now();
    const hit = this.cached.get(tenantId);
    if (hit && now - hit.at < this.cacheTtlMs && this.versions.fresh(tenantId, hit.version)) return hit.value;
    const version = this.versions.of(tenantId);
    const value = this.getSettings(tenantId);
    this.cached.set(tenantId, { at: now, version, value });
    value.catch(() => this.cached.delete(tenantId));
    if (this.cached.size > 10_000) {
      for (const [id, entry] of this.cached) if (now - entry.at >= this.cacheTtlMs) this.cached.delete(id);
    }
    return value;
  }

  /** Sets the given fields only; the others keep their stored value or default. */
  async patchSettings(tenantId: string, patch: SettingsPatch): Promise<TenantSettingsType> {
    const stored = await this.settings.revise(tenantId, (current) => applyPatch(contentOf(current), patch));
    this.cached.delete(tenantId);
    await this.configVersions.changed(tenantId);
    return settingsOf(stored);
  }
}

function rulesOf(doc: RulesContent | null): RuleSetType {
  if (!doc) return DEFAULT_RULES;
  // As stored: a set over a budget introduced later is shown (and applied) as written until it is replaced.
  const parsed = StoredRuleSet.safeParse({ rules: doc.rules });
  return parsed.success ? parsed.data : DEFAULT_RULES;
}

function settingsOf(content: SettingsContent | null): TenantSettingsType {
  if (!content) return DEFAULT_SETTINGS;
  const parsed = TenantSettings.safeParse(content);
  return parsed.success ? parsed.data : DEFAULT_SETTINGS;
}

/** The stored settings fields, less the document's own. */
function contentOf(doc: Revised<SettingsContent> | null): SettingsContent {
  if (!doc) return {};
  const content: Partial<Revised<SettingsContent>> = { ...doc };
  delete content._id;
  delete content.epoch;
  delete content.revision;
  delete content.updatedAt;
  return content;
}

function applyPatch(current: SettingsContent, patch: SettingsPatch): SettingsContent {
  const next: SettingsContent = { ...current };
  if (patch.suspensionThreshold !== undefined) next.suspensionThreshold = patch.suspensionThreshold;
  if (patch.testMode !== undefined) next.testMode = patch.testMode;
  if (patch.rolloutPercentage !== undefined) next.rolloutPercentage = patch.rolloutPercentage;
  if (patch.emails) {
    const emails = { ...current.emails } as Partial<TenantSettingsType['emails']>;
    if (patch.emails.enabled !== undefined) emails.enabled = patch.emails.enabled;
    const templates: Partial<Record<EmailKind, EmailTemplate>> = { ...emails.templates };
    for (const [kind, template] of Object.entries(patch.emails.templates ?? {}) as [
      EmailKind,
      EmailTemplate | null | undefined,
    ][]) {
      if (template === null) delete templates[kind];
      else if (template !== undefined) templates[kind] = template;
    }
    emails.templates = templates;
    next.emails = emails as TenantSettingsType['emails'];
  }
  return next;
}
