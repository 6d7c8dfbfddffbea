/** The gRPC metadata key carrying the tenant's configuration version on a gateway → moderator call. */
export const CONFIG_VERSION_METADATA = 'vigil-config-version';

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

  /** The newest version seen for the tenant, 0 when none. */
  of(tenantId: string): number {
    return this.known.get(tenantId) ?? 0;
  }

  /** True when something read at version `readAt` of the tenant's configuration is still current. */
  fresh(tenantId: string, readAt: number): boolean {
    return readAt >= this.of(tenantId);
  }
}

/** The version in a call's metadata value (a decimal string), or undefined when absent or malformed. */
export function parseConfigVersion(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) return undefined;
  return Number(value);
}

/**
 * Values read per tenant, kept until a newer configuration version of the tenant is seen or `ttlMs` has passed (a
 * backstop), at most `maxTenants` of them (the least recently used dropped first). Concurrent misses share one read,
 * and a failed read is not kept.
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
    if (hit && now - hit.at < this.options.ttlMs && this.versions.fresh(tenantId, hit.version)) {
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
