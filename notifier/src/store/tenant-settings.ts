import { COLLECTIONS, DEFAULT_SETTINGS, TenantSettings, VersionedCache, type TenantVersions } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';

type SettingsDoc = { _id: string } & Partial<TenantSettings>;

/** How long a tenant's settings are used without a newer configuration version seen, milliseconds: a backstop. */
const TTL_MS = 5_000;

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
  private readonly cache: VersionedCache<TenantSettings>;

  constructor(db: Db, versions: TenantVersions, ttlMs = TTL_MS, now: () => number = Date.now) {
    this.settings = db.collection(COLLECTIONS.settings);
    this.cache = new VersionedCache(versions, (tenantId) => this.read(tenantId), { ttlMs, now });
  }

  /**
   * The tenant's settings, at least as new as `configVersion` (an event's); the defaults when it has none, or when
   * what is stored does not parse. Concurrent misses share one read.
   */
  settingsOf(tenantId: string, configVersion?: number): Promise<TenantSettings> {
    return this.cache.get(tenantId, configVersion);
  }

  private async read(tenantId: string): Promise<TenantSettings> {
    const doc = await this.settings.findOne({ _id: tenantId });
    if (!doc) return DEFAULT_SETTINGS;
    const parsed = TenantSettings.safeParse({ ...doc, _id: undefined });
    return parsed.success ? parsed.data : DEFAULT_SETTINGS;
  }
}
