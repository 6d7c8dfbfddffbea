import { COLLECTIONS, DEFAULT_SETTINGS, TenantSettings, type TenantVersions } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';

type SettingsDoc = { _id: string } & Partial<TenantSettings>;

/** How long a tenant's settings are used without a newer configuration version seen, milliseconds: a backstop. */
const TTL_MS = 5_000;
/** Tenants whose settings are kept at most; past it the least recently read is dropped. */
const MAX_TENANTS = 10_000;

/**
 * The tenants' settings, which the gateway writes: whether and how to email users, and the appeal window that
 * statements of reasons state (in user emails and in webhooks). The notifier only reads them.
 *
 * Kept per tenant and read again once an event carries a newer configuration version than the one they were read at
 * (every change through the API raises it before answering, and the events of what follows carry it), or after
 * TTL_MS. So a record costs no settings read, and a change applies to every event that follows it.
 */
export class TenantSettingsReads {
  private readonly settings: Collection<SettingsDoc>;
  private readonly cached = new Map<string, { at: number; version: number; value: Promise<TenantSettings> }>();

  constructor(
    db: Db,
    private readonly versions: TenantVersions,
    private readonly ttlMs = TTL_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.settings = db.collection(COLLECTIONS.settings);
  }

  /**
   * The tenant's settings, at least as new as `configVersion` (an event's); the defaults when it has none, or when
   * what is stored does not parse. Concurrent misses share one read.
   */
  settingsOf(tenantId: string, configVersion?: number): Promise<TenantSettings> {
    this.versions.observe(tenantId, configVersion);
    const now = this.now();
    const hit = this.cached.get(tenantId);
    if (hit && now - hit.at < this.ttlMs && this.versions.fresh(tenantId, hit.version)) {
      // Most recently used last, so the oldest is dropped first.
      this.cached.delete(tenantId);
      this.cached.set(tenantId, hit);
      return hit.value;
    }
    const entry = { at: now, version: this.versions.of(tenantId), value: this.read(tenantId) };
    this.cached.delete(tenantId);
    this.cached.set(tenantId, entry);
    entry.value.catch(() => {
      if (this.cached.get(tenantId) === entry) this.cached.delete(tenantId);
    });
    if (this.cached.size > MAX_TENANTS) {
      const oldest = this.cached.keys().next();
      if (!oldest.done) this.cached.delete(oldest.value);
    }
    return entry.value;
  }

  private async read(tenantId: string): Promise<TenantSettings> {
    const doc = await this.settings.findOne({ _id: tenantId });
    if (!doc) return DEFAULT_SETTINGS;
    const parsed = TenantSettings.safeParse({ ...doc, _id: undefined });
    return parsed.success ? parsed.data : DEFAULT_SETTINGS;
  }
}
