import { COLLECTIONS, DEFAULT_SETTINGS, TenantSettings, isCurrent, type TenantVersions } from '@vigil/proto';
import { DEFAULT_RULES, StoredRuleSet, type RuleSet } from '@vigil/proto/rules';
import type { Db, Document } from 'mongodb';
import type { Logger } from 'pino';
import { guarded } from './mongo-errors';

export interface TenantConfig {
  settings: TenantSettings;
  rules: RuleSet;
  /** The live rule set's version (the gateway's rule versions); 0 for the default set or one from before versions. */
  rulesVersion: number;
  /** A rule set version run in shadow beside the live one (docs/rules-safely.md, "Shadow versions"), if any. */
  shadowVersion?: { version: number; rules: RuleSet };
}

/**
 * Settings and rules per tenant (written by the gateway), cached so that a burst of moderations costs one read;
 * concurrent misses share one read. An entry serves until a newer configuration version of its tenant is seen (the
 * gateway stamps the version it knows on every call and command: a change made through it applies to the next
 * moderation), and at most `ttlMs` (the bound for a change this process has not heard of) after it was read or its
 * version last confirmed by a call or command (TenantVersions.confirm): a tenant with steady traffic is read once
 * per change, not once per `ttlMs`. A stored document that no
 * longer parses falls back to the defaults.
 */
export class TenantConfigCache {
  private readonly entries = new Map<string, { at: number; version: number; value: Promise<TenantConfig> }>();
  /**
   * The last rule set parsed per tenant, by the stored document's epoch and revision: a reload that finds the same
   * revision keeps the same object, which the engine has already prepared (and nothing is parsed again).
   */
  private readonly parsedRules = new Map<
    string,
    { version: string; rules: RuleSet; shadowVersion: TenantConfig['shadowVersion'] }
  >();

  constructor(
    private readonly db: Db,
    private readonly ttlMs: number,
    private readonly log: Logger,
    private readonly versions: TenantVersions,
  ) {}

  get(tenantId: string): Promise<TenantConfig> {
    const now = Date.now();
    const hit = this.entries.get(tenantId);
    if (hit && isCurrent(this.versions, tenantId, hit, now, this.ttlMs)) return hit.value;
    // The version known before the read starts: what the read returns is at least that new.
    const version = this.versions.of(tenantId);
    const value = this.read(tenantId);
    this.entries.set(tenantId, { at: now, version, value });
    // A failed read leaves the cache, unless a newer read took its place meanwhile.
    value.catch(() => {
      if (this.entries.get(tenantId)?.value === value) this.entries.delete(tenantId);
    });
    if (this.entries.size > 10_000) this.evictExpired(now);
    return value;
  }

  private evictExpired(now: number): void {
    for (const [tenantId, entry] of this.entries) {
      if (now - entry.at >= this.ttlMs) {
        this.entries.delete(tenantId);
        this.parsedRules.delete(tenantId);
      }
    }
  }

  private async read(tenantId: string): Promise<TenantConfig> {
    const [settingsDoc, rulesDoc] = await guarded(() =>
      Promise.all([
        this.db.collection<Document & { _id: string }>(COLLECTIONS.settings).findOne({ _id: tenantId }),
        this.db.collection<Document & { _id: string }>(COLLECTIONS.rules).findOne({ _id: tenantId }),
      ]),
    );
    let settings = DEFAULT_SETTINGS;
    if (settingsDoc) {
      const parsed = TenantSettings.safeParse({ ...settingsDoc, _id: undefined });
      if (parsed.success) settings = parsed.data;
      else this.log.warn({ tenantId }, 'stored tenant settings invalid, using defaults');
    }
    let rules = DEFAULT_RULES;
    let shadowVersion: TenantConfig['shadowVersion'];
    const rulesVersion = typeof rulesDoc?.version === 'number' ? rulesDoc.version : 0;
    if (rulesDoc) {
      const version =
        typeof rulesDoc.revision === 'number' ? `${String(rulesDoc.epoch ?? '')}:${rulesDoc.revision}` : undefined;
      const known = this.parsedRules.get(tenantId);
      if (version !== undefined && known?.version === version) {
        rules = known.rules;
        shadowVersion = known.shadowVersion;
      } else {
        // As stored, without the budget: a set stored before a budget existed is applied as written (each record's
        // checks are bounded in time whatever the set holds).
        const parsed = StoredRuleSet.safeParse({ rules: rulesDoc.rules as unknown });
        if (parsed.success) rules = parsed.data;
        else this.log.warn({ tenantId }, 'stored rule set invalid, using defaults');
        shadowVersion = this.shadowVersionOf(tenantId, rulesDoc.shadow);
        if (version !== undefined) this.parsedRules.set(tenantId, { version, rules, shadowVersion });
      }
    }
    return { settings, rules, rulesVersion, ...(shadowVersion ? { shadowVersion } : {}) };
  }

  /** The shadow version as the gateway stores it beside the live rules (`shadow: {version, rules}`), if it parses. */
  private shadowVersionOf(tenantId: string, stored: unknown): TenantConfig['shadowVersion'] {
    if (!stored || typeof stored !== 'object') return undefined;
    const { version, rules } = stored as { version?: unknown; rules?: unknown };
    const parsed = StoredRuleSet.safeParse({ rules });
    if (typeof version !== 'number' || !parsed.success) {
      this.log.warn({ tenantId }, 'stored shadow version invalid, not run');
      return undefined;
    }
    return { version, rules: parsed.data };
  }
}
