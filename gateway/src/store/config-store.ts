import type { Db } from 'mongodb';
import {
  COLLECTIONS,
  DEFAULT_SETTINGS,
  TenantSettings,
  type EmailKind,
  type EmailTemplate,
  type TenantSettings as TenantSettingsType,
  VersionedCache,
  type TenantVersions,
} from '@vigil/proto';
import { DEFAULT_RULES, StoredRuleSet, type RuleSet as RuleSetType } from '@vigil/proto/rules';
import { ConflictError, NotFoundError } from '../errors';
import type { ConfigVersionStore } from './config-version-store';
import { RevisedDocs, type Revised } from './revised-docs';
import type { RuleVersionDoc, RuleVersionStore } from './rule-version-store';

interface RulesContent {
  rules: RuleSetType['rules'];
  /** The rule set version it is (RuleVersionStore); absent on a document written before versions existed. */
  version?: number;
  /** A version run in shadow beside the live one, with its rules (the moderator reads them with the live set). */
  shadow?: { version: number; rules: RuleSetType['rules'] };
}

/** The shadow version kept across a change of the live set, unless it is the version made live. */
const keepShadow = (current: RulesContent | null, live: number): Pick<RulesContent, 'shadow'> =>
  current?.shadow && current.shadow.version !== live ? { shadow: current.shadow } : {};

/** The live rule set and its version: 0 for the default set, or one written before versions existed. */
export type LiveRules = RuleSetType & { version: number };

/** Who writes a rule set version, and why. */
export interface RulesWrite {
  author: string;
  note?: string;
}

type SettingsContent = Partial<TenantSettingsType>;

/** A settings change: absent fields keep their value; a `null` email template goes back to the default. */
export interface SettingsPatch {
  suspensionThreshold?: number;
  testMode?: boolean;
  rolloutPercentage?: number;
  emails?: { enabled?: boolean; templates?: Partial<Record<EmailKind, EmailTemplate | null>> };
  /** Replaces the whole list. */
  trustedFlaggers?: TenantSettingsType['trustedFlaggers'];
  flaggedVisibility?: TenantSettingsType['flaggedVisibility'];
  appealWindowDays?: number;
  reporterEmailRetentionDays?: number;
  /** Null: no `rule.degraded`. */
  ruleDegradedOverturnRate?: number | null;
  ruleDegradedMinReviews?: number;
}

/**
 * Per-tenant rule sets and settings (`_id` = tenant id), read by the moderator. Every change is a new revision
 * (RevisedDocs), so concurrent changes (two presets added at once, two settings patched at once) all land, and raises
 * the tenant's configuration version before it returns (the moderator reloads on a newer one).
 */
export class ConfigStore {
  private readonly rules: RevisedDocs<RulesContent>;
  private readonly settings: RevisedDocs<SettingsContent>;
  private readonly cached: VersionedCache<TenantSettingsType>;

  /**
   * `cacheTtlMs`: how long `cachedSettings` may answer from memory (the hot ingest path) since its read or the last
   * confirmation of its version (`versions`), milliseconds, unless a newer version of the tenant is known first.
   */
  constructor(
    db: Db,
    private readonly configVersions: ConfigVersionStore,
    versions: TenantVersions,
    readonly ruleVersions: RuleVersionStore,
    cacheTtlMs = 1000,
  ) {
    this.rules = new RevisedDocs(db, COLLECTIONS.rules);
    this.settings = new RevisedDocs(db, COLLECTIONS.settings);
    this.cached = new VersionedCache(versions, (tenantId) => this.getSettings(tenantId), { ttlMs: cacheTtlMs });
  }

  async getRules(tenantId: string): Promise<LiveRules> {
    const doc = await this.rules.get(tenantId);
    return { ...rulesOf(doc), version: doc?.version ?? 0 };
  }

  /** Writes the rule set as a new version and makes it live. */
  async putRules(tenantId: string, ruleSet: RuleSetType, write: RulesWrite): Promise<LiveRules> {
    const version = await this.ruleVersions.allocate(tenantId);
    await this.ruleVersions.insert({ tenantId, version, rules: ruleSet.rules, kind: 'live', ...writeOf(write) });
    return this.makeLive(tenantId, ruleSet.rules, version);
  }

  /**
   * Changes the rule set from its current state, as a new live version: `change` may run more than once (when another
   * change landed first) and may throw to refuse. Returns the rule set stored.
   */
  async changeRules(
    tenantId: string,
    change: (current: RuleSetType) => RuleSetType,
    write: RulesWrite,
  ): Promise<LiveRules> {
    // A change refused on the stored set takes no version number (numbers are bounded per tenant).
    change(rulesOf(await this.rules.get(tenantId)));
    const version = await this.ruleVersions.allocate(tenantId);
    const stored = await this.rules.revise(tenantId, (current) => ({
      rules: change(rulesOf(current)).rules,
      version,
      ...keepShadow(current, version),
    }));
    // Recorded once the content is known (it was decided on the stored set): the version is live a moment before its
    // document exists, never the other way round for a live write that was refused.
    await this.ruleVersions.insert({ tenantId, version, rules: stored.rules, kind: 'live', ...writeOf(write) });
    await this.configVersions.changed(tenantId);
    return { rules: stored.rules, version };
  }

  /** Saves a rule set as a draft version beside the live one: it judges nothing until promoted. */
  async saveDraft(tenantId: string, ruleSet: RuleSetType, write: RulesWrite): Promise<RuleVersionDoc> {
    const version = await this.ruleVersions.allocate(tenantId);
    return this.ruleVersions.insert({ tenantId, version, rules: ruleSet.rules, kind: 'draft', ...writeOf(write) });
  }

  /**
   * Makes a draft the live rule set (itself, under its number). `accept` sees its rules first and may throw to refuse
   * (what a rule set must pass to judge here may have changed since it was saved).
   */
  async promote(tenantId: string, version: number, accept: (ruleSet: RuleSetType) => void): Promise<LiveRules> {
    const doc = await this.versionOf(tenantId, version);
    accept({ rules: doc.rules });
    if (doc.kind !== 'draft') {
      throw new ConflictError(`version ${version} is not a draft: roll back to it to make it live again`, { version });
    }
    return this.makeLive(tenantId, doc.rules, version);
  }

  /** Makes an earlier version's rules live again, as a new version that names it; `accept` as for `promote`. */
  async rollBack(
    tenantId: string,
    to: number,
    write: RulesWrite,
    accept: (ruleSet: RuleSetType) => void,
  ): Promise<LiveRules> {
    const doc = await this.versionOf(tenantId, to);
    accept({ rules: doc.rules });
    const version = await this.ruleVersions.allocate(tenantId);
    await this.ruleVersions.insert({
      tenantId,
      version,
      rules: doc.rules,
      kind: 'live',
      basedOn: to,
      ...writeOf(write),
    });
    return this.makeLive(tenantId, doc.rules, version);
  }

  async versionOf(tenantId: string, version: number): Promise<RuleVersionDoc> {
    const doc = await this.ruleVersions.get(tenantId, version);
    if (!doc) throw new NotFoundError(`rule set version ${version} not found`, { version });
    return doc;
  }

  private async makeLive(tenantId: string, rules: RuleSetType['rules'], version: number): Promise<LiveRules> {
    await this.rules.revise(tenantId, (current) => ({ rules, version, ...keepShadow(current, version) }));
    await this.configVersions.changed(tenantId);
    return { rules, version };
  }

  /** The version run in shadow beside the live one, or null. */
  async shadowVersion(tenantId: string): Promise<number | null> {
    return (await this.rules.get(tenantId))?.shadow?.version ?? null;
  }

  /**
   * Runs `version` in shadow beside the live set (one at a time: it replaces the previous one), or none (null).
   * `accept` sees its rules first and may throw to refuse. ConflictError for the live version itself.
   */
  async setShadowVersion(
    tenantId: string,
    version: number | null,
    accept: (ruleSet: RuleSetType) => void,
  ): Promise<number | null> {
    const doc = version === null ? null : await this.versionOf(tenantId, version);
    if (doc) accept({ rules: doc.rules });
    await this.rules.revise(tenantId, (current) => {
      const live = current?.version ?? 0;
      if (doc && doc.version === live)
        throw new ConflictError(`version ${live} is live: a shadow version runs beside it`, { version: live });
      // With no document yet the default set is live: it is written as version 0, as the moderator would read it.
      const base = current ? { rules: current.rules, version: live } : { rules: DEFAULT_RULES.rules, version: 0 };
      return doc ? { ...base, shadow: { version: doc.version, rules: doc.rules } } : base;
    });
    await this.configVersions.changed(tenantId);
    return doc?.version ?? null;
  }

  async getSettings(tenantId: string): Promise<TenantSettingsType> {
    return settingsOf(contentOf(await this.settings.get(tenantId)));
  }

  /**
   * Settings read once per configuration version, concurrent misses sharing one read: ingest reads the roll-out
   * percentage on every request. A change made through this replica applies at once (its version is known here); one
   * made through another replica once this one knows its version (the next key check, ApiKeyAuthenticator). Without
   * such checks (no API traffic for the tenant) an entry lasts `cacheTtlMs`.
   */
  cachedSettings(tenantId: string): Promise<TenantSettingsType> {
    return this.cached.get(tenantId);
  }

  /**
   * Changes the tenant's policies from their stored list: `change` may run more than once (when another change landed
   * first) and may throw to refuse. Returns the list stored.
   */
  async changePolicies(
    tenantId: string,
    change: (current: TenantSettingsType['policies']) => TenantSettingsType['policies'],
  ): Promise<TenantSettingsType['policies']> {
    const stored = await this.settings.revise(tenantId, (current) => {
      const content = contentOf(current);
      // Without undefined fields: the driver stores them as null, which the settings schema refuses (the whole
      // document would then read as the defaults).
      const policies = change(settingsOf(content).policies).map(
        (policy) =>
          Object.fromEntries(Object.entries(policy).filter(([, value]) => value !== undefined)) as typeof policy,
      );
      return { ...content, policies };
    });
    await this.configVersions.changed(tenantId);
    return settingsOf(stored).policies;
  }

  /** Sets the given fields only; the others keep their stored value or default. */
  async patchSettings(tenantId: string, patch: SettingsPatch): Promise<TenantSettingsType> {
    const stored = await this.settings.revise(tenantId, (current) => applyPatch(contentOf(current), patch));
    await this.configVersions.changed(tenantId);
    return settingsOf(stored);
  }
}

function writeOf(write: RulesWrite): RulesWrite {
  return { author: write.author, ...(write.note !== undefined ? { note: write.note } : {}) };
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
  if (patch.trustedFlaggers !== undefined) next.trustedFlaggers = patch.trustedFlaggers;
  if (patch.flaggedVisibility !== undefined) next.flaggedVisibility = patch.flaggedVisibility;
  if (patch.appealWindowDays !== undefined) next.appealWindowDays = patch.appealWindowDays;
  if (patch.reporterEmailRetentionDays !== undefined) {
    next.reporterEmailRetentionDays = patch.reporterEmailRetentionDays;
  }
  if (patch.ruleDegradedOverturnRate !== undefined) next.ruleDegradedOverturnRate = patch.ruleDegradedOverturnRate;
  if (patch.ruleDegradedMinReviews !== undefined) next.ruleDegradedMinReviews = patch.ruleDegradedMinReviews;
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
