import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { z } from 'zod';
import { COLLECTIONS, TenantVersions, ulid } from '@vigil/proto';
import type { Limit } from '../rate-limit/window-counter';
import { ConfigVersionStore } from './config-version-store';

/** A tenant's own per-key rate limit: requests (0: none) per window of 1 second to a day. */
export const TenantRateLimit = z.object({
  requests: z.number().int().min(0).max(1_000_000_000),
  windowSeconds: z.number().int().min(1).max(86_400),
});

export interface TenantDoc {
  _id: string; // ten_<ulid>
  name: string;
  createdAt: Date;
  /** Replaces the gateway's default per-key rate limit for this tenant's keys; set by operators only. */
  rateLimit?: Limit;
}

export interface ApiKeyDoc {
  _id: string; // key_<ulid>
  tenantId: string;
  /** SHA-256 (hex) of the full key: the key itself is never stored. */
  hash: string;
  /** The first characters of the key, for telling keys apart in listings. */
  prefix: string;
  createdAt: Date;
  revokedAt?: Date;
}

const KEY_PREFIX = 'vgl_';
/** `vgl_` + 64 hex characters. */
export const KEY_PATTERN = /^vgl_[0-9a-f]{64}$/;

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('hex');
}

/** Constant-time equality of two hex digests of the same length. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Tenants and their API keys (the gateway is their only writer). */
export class TenantStore {
  private readonly tenants: Collection<TenantDoc>;
  private readonly keys: Collection<ApiKeyDoc>;
  private readonly versions: Collection<{ _id: string; version?: number }>;
  /** Raises a tenant's configuration version when a key of it is revoked or its rate limit changes. */
  private readonly configVersions: ConfigVersionStore;

  constructor(db: Db) {
    this.tenants = db.collection(COLLECTIONS.tenants);
    this.keys = db.collection(COLLECTIONS.apiKeys);
    this.versions = db.collection(COLLECTIONS.configVersions);
    this.configVersions = new ConfigVersionStore(db, new TenantVersions());
  }

  async ensureIndexes(): Promise<void> {
    await this.tenants.createIndex({ name: 1 }, { unique: true, name: 'name_unique' });
    await this.keys.createIndex({ hash: 1 }, { unique: true, name: 'hash_unique' });
    await this.keys.createIndex({ tenantId: 1 }, { name: 'tenant' });
  }

  async createTenant(name: string): Promise<TenantDoc> {
    const doc: TenantDoc = { _id: `ten_${ulid()}`, name, createdAt: new Date() };
    await this.tenants.insertOne(doc);
    return doc;
  }

  listTenants(): Promise<TenantDoc[]> {
    return this.tenants.find({}).sort({ _id: 1 }).toArray();
  }

  async findTenant(idOrName: string): Promise<TenantDoc | null> {
    return (await this.tenants.findOne({ _id: idOrName })) ?? (await this.tenants.findOne({ name: idOrName }));
  }

  /** Creates a key and returns it in clear: the only time it is ever visible. */
  async createKey(tenantId: string): Promise<{ doc: ApiKeyDoc; key: string }> {
    const key = generateKey();
    const doc: ApiKeyDoc = {
      _id: `key_${ulid()}`,
      tenantId,
      hash: hashKey(key),
      prefix: key.slice(0, KEY_PREFIX.length + 6),
      createdAt: new Date(),
    };
    await this.keys.insertOne(doc);
    return { doc, key };
  }

  /**
   * True when the key existed and was not revoked yet. The tenant's configuration version is raised after, so every
   * gateway drops the key at its next version check (ApiKeyAuthenticator); a key found revoked already raises it
   * again, in case a revocation failed between its two writes.
   */
  async revokeKey(keyId: string): Promise<boolean> {
    const key = await this.keys.findOne({ _id: keyId }, { projection: { tenantId: 1, revokedAt: 1 } });
    if (!key) return false;
    const result = await this.keys.updateOne(
      { _id: keyId, revokedAt: { $exists: false } },
      { $set: { revokedAt: new Date() } },
    );
    await this.configVersions.changed(key.tenantId);
    return result.modifiedCount === 1;
  }

  listKeys(tenantId: string): Promise<ApiKeyDoc[]> {
    return this.keys
      .find({ tenantId }, { projection: { hash: 0 } })
      .sort({ _id: 1 })
      .toArray();
  }

  findKeyByHash(hash: string): Promise<ApiKeyDoc | null> {
    return this.keys.findOne({ hash });
  }

  async findRateLimit(tenantId: string): Promise<Limit | null> {
    const doc = await this.tenants.findOne({ _id: tenantId }, { projection: { rateLimit: 1 } });
    const parsed = TenantRateLimit.safeParse(doc?.rateLimit);
    return parsed.success ? parsed.data : null;
  }

  /** The tenant's configuration version (written by ConfigVersionStore), 0 before its first change. */
  async findConfigVersion(tenantId: string): Promise<number> {
    const doc = await this.versions.findOne({ _id: tenantId }, { projection: { version: 1 } });
    return typeof doc?.version === 'number' ? doc.version : 0;
  }

  /** Sets the tenant's own rate limit, or removes it (`null`: the default applies). False when there is no tenant. */
  async setRateLimit(tenantId: string, limit: Limit | null): Promise<boolean> {
    const update = limit ? { $set: { rateLimit: limit } } : { $unset: { rateLimit: '' as const } };
    if ((await this.tenants.updateOne({ _id: tenantId }, update)).matchedCount !== 1) return false;
    // Every gateway reads the tenant's limit again at its next version check (ApiKeyAuthenticator).
    await this.configVersions.changed(tenantId);
    return true;
  }
}
