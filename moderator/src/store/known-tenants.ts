import { COLLECTIONS } from '@vigil/proto';
import type { Db, Document } from 'mongodb';
import { UnknownTenantError } from '../domain/errors';
import { guarded } from './mongo-errors';

/** Most tenants remembered at once; past it, expired entries are dropped. */
const MAX_ENTRIES = 10_000;

/**
 * Whether a tenant exists, from the `tenants` collection the gateway writes (read by `_id` only). A tenant found is
 * remembered for `ttlMs`; one not found is asked again on every call, so a tenant created a moment ago works at once.
 * Concurrent lookups of one tenant share one read.
 */
export class KnownTenants {
  private readonly known = new Map<string, number>();
  private readonly pending = new Map<string, Promise<boolean>>();

  constructor(
    private readonly db: Db,
    private readonly ttlMs: number,
  ) {}

  /** Throws UnknownTenantError when the tenant does not exist (UnavailableError when the store cannot answer). */
  async assertKnown(tenantId: string): Promise<void> {
    if (!(await this.exists(tenantId))) throw new UnknownTenantError('unknown tenant', { tenantId });
  }

  private async exists(tenantId: string): Promise<boolean> {
    const now = Date.now();
    const until = this.known.get(tenantId);
    if (until !== undefined && now < until) return true;
    let lookup = this.pending.get(tenantId);
    if (!lookup) {
      lookup = this.read(tenantId).finally(() => this.pending.delete(tenantId));
      this.pending.set(tenantId, lookup);
    }
    const found = await lookup;
    if (found) {
      if (this.known.size >= MAX_ENTRIES) this.evictExpired(now);
      this.known.set(tenantId, now + this.ttlMs);
    }
    return found;
  }

  private evictExpired(now: number): void {
    for (const [tenantId, until] of this.known) if (now >= until) this.known.delete(tenantId);
    // Still full of live entries: drop the oldest (Map keeps insertion order).
    while (this.known.size >= MAX_ENTRIES) {
      const oldest = this.known.keys().next();
      if (oldest.done) break;
      this.known.delete(oldest.value);
    }
  }

  private async read(tenantId: string): Promise<boolean> {
    const doc = await guarded(() =>
      this.db
        .collection<Document & { _id: string }>(COLLECTIONS.tenants)
        .findOne({ _id: tenantId }, { projection: { _id: 1 } }),
    );
    return doc !== null;
  }
}
