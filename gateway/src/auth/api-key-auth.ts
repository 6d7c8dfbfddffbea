import type { TenantVersions } from '@vigil/proto';
import type { Context, Next } from 'koa';
import { UnauthorizedError, UnavailableError } from '../errors';
import type { Limit } from '../rate-limit/window-counter';
import { KEY_PATTERN, hashKey, sameHash, type ApiKeyDoc } from '../store/tenant-store';

export interface Principal {
  tenantId: string;
  keyId: string;
  /** The tenant's own rate limit, when the operator set one (`tenant rate-limit`). */
  rateLimit?: Limit;
}

export interface KeyLookup {
  findKeyByHash(hash: string): Promise<ApiKeyDoc | null>;
  findRateLimit(tenantId: string): Promise<Limit | null>;
  /** The tenant's configuration version (see ConfigVersionStore), 0 before its first change. */
  findConfigVersion(tenantId: string): Promise<number>;
}

interface Entry {
  principal: Principal | null;
  expiresAt: number;
  /** The tenant's configuration version when the key and its tenant's limit were read. */
  version: number;
  /** When the key and its tenant's limit were read (a version check does not count). */
  readAt: number;
}

/** How long a verified key is kept on version checks alone before it is read again in full, milliseconds. */
export const FULL_LOOKUP_MS = 60_000;

/**
 * Resolves a bearer key to its tenant and the tenant's own rate limit. Verified and unknown keys are both cached for
 * `ttlMs` (at most a second) so a request costs no database round trip (and a flood of bad keys costs one lookup each
 * per window). When a verified key's time is up, only its tenant's configuration version is read: the same version
 * keeps the entry for another `ttlMs`, a new one reads the key and the tenant's limit again. A revocation or a change of
 * the tenant's rate limit raises the version (TenantStore), so it takes effect within `ttlMs` on every replica; and
 * every `FULL_LOOKUP_MS` the key is read in full anyway, should a version raise have failed. Each check confirms the
 * version in `versions`: a change made through another replica is known here, and stamped on what this replica
 * sends, within `ttlMs` too. The cache is bounded: the oldest entry goes first (Map keeps insertion order).
 */
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, Entry>();
  private readonly pending = new Map<string, { startedAt: number; lookup: Promise<Principal | null> }>();

  constructor(
    private readonly store: KeyLookup,
    private readonly options: { ttlMs: number; maxEntries: number; versions: TenantVersions; now?: () => number },
  ) {}

  async authenticate(key: string): Promise<Principal | null> {
    if (!KEY_PATTERN.test(key)) return null;
    const hash = hashKey(key);
    const now = (this.options.now ?? Date.now)();
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > now) return cached.principal;
    // Concurrent first requests with one key share a single lookup, unless it started longer than the time to live
    // ago: what it reads may predate a change that answered since (see ConfigVersionStore).
    const pending = this.pending.get(hash);
    if (pending && now - pending.startedAt < this.options.ttlMs) return pending.lookup;
    const lookup = this.lookup(hash, now).finally(() => {
      if (this.pending.get(hash)?.lookup === lookup) this.pending.delete(hash);
    });
    this.pending.set(hash, { startedAt: now, lookup });
    return lookup;
  }

  /** How long a key's lookup (and the tenant's configuration version read with it) is used, milliseconds. */
  get ttlMs(): number {
    return this.options.ttlMs;
  }

  private async lookup(hash: string, now: number): Promise<Principal | null> {
    const known = this.cache.get(hash);
    if (known?.principal && now - known.readAt < FULL_LOOKUP_MS) {
      const { tenantId } = known.principal;
      const version = await this.store.findConfigVersion(tenantId);
      this.options.versions.confirm(tenantId, version, now);
      if (version === known.version) {
        this.remember(hash, { ...known, expiresAt: now + this.options.ttlMs });
        return known.principal;
      }
    }
    const doc = await this.store.findKeyByHash(hash);
    const valid = doc !== null && doc.revokedAt === undefined && sameHash(doc.hash, hash);
    let principal: Principal | null = null;
    let version = 0;
    if (valid) {
      const [rateLimit, stored] = await Promise.all([
        this.store.findRateLimit(doc.tenantId),
        this.store.findConfigVersion(doc.tenantId),
      ]);
      version = stored;
      this.options.versions.confirm(doc.tenantId, version, now);
      principal = { tenantId: doc.tenantId, keyId: doc._id, ...(rateLimit ? { rateLimit } : {}) };
    }
    this.remember(hash, { principal, expiresAt: now + this.options.ttlMs, version, readAt: now });
    return principal;
  }

  private remember(hash: string, entry: Entry): void {
    if (this.options.ttlMs <= 0) return;
    this.cache.delete(hash);
    if (this.cache.size >= this.options.maxEntries) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(hash, entry);
  }
}

const BEARER = /^Bearer +(\S+)\s*$/i;

/** Runs before the body is read: an unauthenticated request never costs a body parse. */
export function requireApiKey(authenticator: ApiKeyAuthenticator) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const match = BEARER.exec(ctx.get('authorization'));
    let principal: Principal | null = null;
    if (match?.[1]) {
      try {
        principal = await authenticator.authenticate(match[1]);
      } catch (err) {
        throw new UnavailableError('authentication is unavailable, try again', undefined, { cause: err });
      }
    }
    if (!principal) throw new UnauthorizedError('missing or invalid API key');
    ctx.state.principal = principal;
    await next();
  };
}
