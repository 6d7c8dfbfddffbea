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
