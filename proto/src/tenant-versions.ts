/** The gRPC metadata key carrying the tenant's configuration version on a gateway → moderator call. */
export const CONFIG_VERSION_METADATA = 'vigil-config-version';
/**
 * The gRPC metadata key (value `1`) saying that the call's configuration version is confirmed: the gateway read it
 * from the store within its key cache's time to live (TenantVersions.isConfirmed), as a command's `configConfirmed`.
 */
export const CONFIG_CONFIRMED_METADATA = 'vigil-config-confirmed';

/** Tenants remembered at most; the least recently seen is forgotten first (it then reads as version 0). */
const MAX_TENANTS = 100_000;

/**
 * The newest configuration version this process has seen per tenant. Every change to a tenant's endpoints, rules or
 * settings made through the API raises the version (gateway `config_versions`); the gateway stamps the version it
 * knows on every command and moderator call, the moderator on every event it stores. A cache entry read while the
 * known version was `v` is stale once a newer one is seen, whatever its age: so a change applies to everything that
 * starts after its answer, with no store read per record (`fresh` is a map lookup).
 *
 * Forgetting a tenant is safe: a version of 0 makes no entry stale, and the caches' time-to-live still bounds them.
 */
export class TenantVersions {
  private readonly known = new Map<string, number>();
  /** When each tenant's known version was last confirmed current (see `confirm`), epoch milliseconds. */
  private readonly confirmed = new Map<string, { version: number; at: number }>();

  /**
   * `confirmedForMs`: how long a confirmation makes the known version one to stamp as confirmed (`isConfirmed`): the
   * gateway's key cache time to live, within which a change made through another gateway is learned. 0 (the default
   * elsewhere): never.
   */
  constructor(private readonly options: { confirmedForMs?: number } = {}) {}

  /** Records a version seen for the tenant; true when it is newer than any seen before. */
  observe(tenantId: string, version: number | undefined | null): boolean {
    if (typeof version !== 'number' || !Number.isSafeInteger(version) || version <= 0) return false;
    const current = this.known.get(tenantId) ?? 0;
    if (version <= current) return false;
    this.known.delete(tenantId);
    if (this.known.size >= MAX_TENANTS) {
      const oldest = this.known.keys().next();
      if (!oldest.done) this.known.delete(oldest.value);
    }
    this.known.set(tenantId, version);
    return true;
  }

  /**
   * Records that `version` was the tenant's current version at `at`: read from the store (the gateway's key lookup),
   * or stamped on a call or command that a gateway accepted then (a gateway stamps the version it confirmed within
   * its key cache's time to live, and a change answers only after that time: see the gateway's ConfigVersionStore).
   * Until a newer version is seen, what was read at this version is as good as read at `at` (`confirmedAt`): a cache
   * whose tenant is confirmed again and again reads its value once, not once per time to live. A version older than
   * the known one confirms nothing.
   */
  confirm(tenantId: string, version: number | undefined | null, at: number = Date.now()): void {
    if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) return;
    this.observe(tenantId, version);
    if (version !== this.of(tenantId)) return;
    const previous = this.confirmed.get(tenantId);
    if (previous && previous.version === version && previous.at >= at) return;
    this.confirmed.delete(tenantId);
    if (this.confirmed.size >= MAX_TENANTS) {
      const oldest = this.confirmed.keys().next();
      if (!oldest.done) this.confirmed.delete(oldest.value);
    }
    this.confirmed.set(tenantId, { version, at });
  }

  /** When the tenant's version was last confirmed (`confirm`) while it was `version`; 0 when it was not. */
  confirmedAt(tenantId: string, version: number): number {
    const confirmed = this.confirmed.get(tenantId);
    return confirmed && confirmed.version === version && version === this.of(tenantId) ? confirmed.at : 0;
  }

  /**
   * True when the known version was confirmed within `confirmedForMs`: what this process sends may say that no change
   * answered before now is newer (see CONFIG_CONFIRMED_METADATA).
   */
  isConfirmed(tenantId: string, now: number = Date.now()): boolean {
    const within = this.options.confirmedForMs ?? 0;
    return within > 0 && now - this.confirmedAt(tenantId, this.of(tenantId)) <= within;
  }

  /** The newest version seen for the tenant, 0 when none. */
  of(tenantId: string): number {
    return this.known.get(tenantId) ?? 0;
  }

  /** True when something read at version `readAt` of the tenant's configuration is still current. */
  fresh(tenantId: string, readAt: number): boolean {
    return readAt >= this.of(tenantId);
  }
}

/**
 * Values read per tenant, kept until a newer configuration version of the tenant is seen or `ttlMs` has passed since
 * the value was read or its version last confirmed (`TenantVersions.confirm`), at most `maxTenants` of them (the least
 * recently used dropped first). Concurrent misses share one read, and a failed read is not kept.
 */
export class VersionedCache<T> {
  private readonly entries = new Map<string, { at: number; version: number; value: Promise<T> }>();

  constructor(
    private readonly versions: TenantVersions,
    private readonly read: (tenantId: string) => Promise<T>,
    private readonly options: { ttlMs: number; maxTenants?: number; now?: () => number },
  ) {}

  /** The tenant's value, read at `configVersion` (an event's or a call's) or later. */
  get(tenantId: string, configVersion?: number): Promise<T> {
    this.versions.observe(tenantId, configVersion);
    const now = (this.options.now ?? Date.now)();
    const hit = this.entries.get(tenantId);
    this.entries.delete(tenantId);
    if (hit && isCurrent(this.versions, tenantId, hit, now, this.options.ttlMs)) {
      this.entries.set(tenantId, hit);
      return hit.value;
    }
    const entry = { at: now, version: this.versions.of(tenantId), value: this.read(tenantId) };
    this.entries.set(tenantId, entry);
    entry.value.catch(() => {
      if (this.entries.get(tenantId) === entry) this.entries.delete(tenantId);
    });
    if (this.entries.size > (this.options.maxTenants ?? 10_000)) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    return entry.value;
  }
}

/**
 * True when a value read at `entry.at`, while `entry.version` was the tenant's known version, is still current at
 * `now`: no newer version is known, and less than `ttlMs` has passed since it was read or its version last confirmed.
 */
export function isCurrent(
  versions: TenantVersions,
  tenantId: string,
  entry: { at: number; version: number },
  now: number,
  ttlMs: number,
): boolean {
  if (!versions.fresh(tenantId, entry.version)) return false;
  return now - Math.max(entry.at, versions.confirmedAt(tenantId, entry.version)) < ttlMs;
}
