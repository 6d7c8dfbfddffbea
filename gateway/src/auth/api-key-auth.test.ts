import type { Limit } from '../rate-limit/window-counter';
import { hashKey, generateKey, type ApiKeyDoc } from '../store/tenant-store';
import { ApiKeyAuthenticator, FULL_LOOKUP_MS } from './api-key-auth';
import { TenantVersions } from '@vigil/proto';

function lookupOf(docs: ApiKeyDoc[], limits = new Map<string, Limit>(), versionsOf = new Map<string, number>()) {
  const calls: string[] = [];
  const versionReads: string[] = [];
  return {
    calls,
    versionReads,
    findKeyByHash: (hash: string) => {
      calls.push(hash);
      return Promise.resolve(docs.find((doc) => doc.hash === hash) ?? null);
    },
    findRateLimit: (tenantId: string) => Promise.resolve(limits.get(tenantId) ?? null),
    findConfigVersion: (tenantId: string) => {
      versionReads.push(tenantId);
      return Promise.resolve(versionsOf.get(tenantId) ?? 0);
    },
  };
}

const docFor = (key: string, extra: Partial<ApiKeyDoc> = {}): ApiKeyDoc => ({
  _id: 'key_1',
  tenantId: 'ten_1',
  hash: hashKey(key),
  prefix: key.slice(0, 10),
  createdAt: new Date(),
  ...extra,
});

describe('API key authentication', () => {
  it('generates vgl_ keys of 32 random bytes in hex', () => {
    const key = generateKey();
    expect(key).toMatch(/^vgl_[0-9a-f]{64}$/);
    expect(generateKey()).not.toBe(key);
  });

  it('resolves a valid key to its tenant and then serves it from the cache', async () => {
    const key = generateKey();
    const lookup = lookupOf([docFor(key)]);
    const auth = new ApiKeyAuthenticator(lookup, { ttlMs: 30000, maxEntries: 10, versions: new TenantVersions() });
    expect(await auth.authenticate(key)).toEqual({ tenantId: 'ten_1', keyId: 'key_1' });
    expect(await auth.authenticate(key)).toEqual({ tenantId: 'ten_1', keyId: 'key_1' });
    expect(lookup.calls).toHaveLength(1);
  });

  it('refuses malformed keys without a lookup', async () => {
    const lookup = lookupOf([]);
    const auth = new ApiKeyAuthenticator(lookup, { ttlMs: 30000, maxEntries: 10, versions: new TenantVersions() });
    for (const key of ['', 'vgl_', 'iffy_' + 'a'.repeat(64), 'vgl_' + 'g'.repeat(64), 'vgl_' + 'a'.repeat(63)]) {
      expect(await auth.authenticate(key)).toBeNull();
    }
    expect(lookup.calls).toHaveLength(0);
  });

  it('refuses an unknown or revoked key', async () => {
    const revoked = generateKey();
    const auth = new ApiKeyAuthenticator(lookupOf([docFor(revoked, { revokedAt: new Date() })]), {
      ttlMs: 30000,
      maxEntries: 10,
      versions: new TenantVersions(),
    });
    expect(await auth.authenticate(revoked)).toBeNull();
    expect(await auth.authenticate(generateKey())).toBeNull();
  });

  it('checks only the version once the cache entry expired, and reads the key again when it changed (a revocation)', async () => {
    const key = generateKey();
    const docs = [docFor(key)];
    const stored = new Map<string, number>([['ten_1', 3]]);
    const lookup = lookupOf(docs, new Map(), stored);
    let now = 1000;
    const auth = new ApiKeyAuthenticator(lookup, {
      ttlMs: 30000,
      maxEntries: 10,
      versions: new TenantVersions(),
      now: () => now,
    });
    expect(await auth.authenticate(key)).not.toBeNull();
    now += 30001;
    expect(await auth.authenticate(key)).not.toBeNull();
    expect(lookup.calls).toHaveLength(1);
    expect(lookup.versionReads).toHaveLength(2);
    // A revocation raises the tenant's version (TenantStore.revokeKey).
    docs[0] = docFor(key, { revokedAt: new Date() });
    stored.set('ten_1', 4);
    now += 29999;
    expect(await auth.authenticate(key)).not.toBeNull();
    now += 2;
    expect(await auth.authenticate(key)).toBeNull();
    expect(lookup.calls).toHaveLength(2);
  });

  it('reads the key again in full every FULL_LOOKUP_MS, even when the version never changed', async () => {
    const key = generateKey();
    const docs = [docFor(key)];
    const lookup = lookupOf(docs);
    let now = 1000;
    const auth = new ApiKeyAuthenticator(lookup, {
      ttlMs: 1000,
      maxEntries: 10,
      versions: new TenantVersions(),
      now: () => now,
    });
    expect(await auth.authenticate(key)).not.toBeNull();
    docs[0] = docFor(key, { revokedAt: new Date() });
    for (let at = 1000; at < FULL_LOOKUP_MS; at += 1000) {
      now += 1000;
      expect(await auth.authenticate(key)).not.toBeNull();
    }
    now += 1000;
    expect(await auth.authenticate(key)).toBeNull();
    expect(lookup.calls).toHaveLength(2);
  });

  it('keeps at most maxEntries keys, evicting the oldest', async () => {
    const keys = [generateKey(), generateKey(), generateKey()];
    const lookup = lookupOf(keys.map((key, i) => docFor(key, { _id: `key_${i}` })));
    const auth = new ApiKeyAuthenticator(lookup, { ttlMs: 30000, maxEntries: 2, versions: new TenantVersions() });
    for (const key of keys) await auth.authenticate(key);
    await auth.authenticate(keys[2]!);
    await auth.authenticate(keys[0]!);
    expect(lookup.calls).toHaveLength(4);
  });

  it("carries the tenant's own rate limit, and its change once the cache entry expired", async () => {
    const key = generateKey();
    const limits = new Map<string, Limit>([['ten_1', { requests: 50, windowSeconds: 10 }]]);
    const stored = new Map<string, number>();
    let now = 1000;
    const auth = new ApiKeyAuthenticator(lookupOf([docFor(key)], limits, stored), {
      ttlMs: 30000,
      maxEntries: 10,
      versions: new TenantVersions(),
      now: () => now,
    });
    expect(await auth.authenticate(key)).toEqual({
      tenantId: 'ten_1',
      keyId: 'key_1',
      rateLimit: { requests: 50, windowSeconds: 10 },
    });
    // A change of the limit raises the tenant's version (TenantStore.setRateLimit).
    limits.delete('ten_1');
    stored.set('ten_1', 1);
    expect((await auth.authenticate(key))?.rateLimit).toEqual({ requests: 50, windowSeconds: 10 });
    now += 30001;
    expect(await auth.authenticate(key)).toStrictEqual({ tenantId: 'ten_1', keyId: 'key_1' });
  });

  it('shares one lookup between concurrent first requests', async () => {
    const key = generateKey();
    const lookup = lookupOf([docFor(key)]);
    const auth = new ApiKeyAuthenticator(lookup, { ttlMs: 30000, maxEntries: 10, versions: new TenantVersions() });
    await Promise.all([auth.authenticate(key), auth.authenticate(key), auth.authenticate(key)]);
    expect(lookup.calls).toHaveLength(1);
  });

  it("learns the tenant's configuration version at each lookup, so a change through another replica shows within ttlMs", async () => {
    const key = generateKey();
    const stored = new Map<string, number>([['ten_1', 4]]);
    const versions = new TenantVersions();
    let now = 1000;
    const auth = new ApiKeyAuthenticator(lookupOf([docFor(key)], new Map(), stored), {
      ttlMs: 1000,
      maxEntries: 10,
      versions,
      now: () => now,
    });
    await auth.authenticate(key);
    expect(versions.of('ten_1')).toBe(4);
    stored.set('ten_1', 5);
    now += 999;
    await auth.authenticate(key);
    expect(versions.of('ten_1')).toBe(4);
    now += 1;
    await auth.authenticate(key);
    expect(versions.of('ten_1')).toBe(5);
  });
});
