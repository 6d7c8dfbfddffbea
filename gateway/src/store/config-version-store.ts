import { COLLECTIONS, type TenantVersions } from '@vigil/proto';
import type { Db } from 'mongodb';
import { RevisedDocs } from './revised-docs';

interface VersionContent {
  version: number;
}

/**
 * Each tenant's configuration version (`config_versions`): raised by every change to its endpoints, rules or
 * settings, after the change is stored and before the API answers. The version is a RevisedDocs revision, so two
 * concurrent changes get two versions even on FerretDB (where `$inc` is a read and a write). This process learns its
 * own changes at once (`versions`); other gateway replicas learn them when they next read the tenant's key (see
 * ApiKeyAuthenticator), and the moderator and notifier from the versions stamped on what the gateways send.
 *
 * A change answers only `settleMs` (the key cache's time to live) after its version was raised. Every gateway's key
 * cache entry then in use was read after the raise, so everything any gateway accepts after the answer carries the
 * new version, and every cache downstream reloads for it: a change governs what follows it on every replica, with no
 * window and no store read per request. The cost is this wait, once per change.
 */
export class ConfigVersionStore {
  private readonly docs: RevisedDocs<VersionContent>;

  constructor(
    db: Db,
    private readonly versions: TenantVersions,
    private readonly settleMs = 0,
  ) {
    this.docs = new RevisedDocs(db, COLLECTIONS.configVersions);
  }

  /** Raises the tenant's version after a change; returns the new one. */
  async changed(tenantId: string): Promise<number> {
    const startedAt = Date.now();
    const { version } = await this.docs.revise(tenantId, (current) => ({ version: (current?.version ?? 0) + 1 }));
    this.versions.confirm(tenantId, version, startedAt);
    if (this.settleMs > 0) await new Promise((resolve) => setTimeout(resolve, this.settleMs));
    return version;
  }

  /** The tenant's stored version, 0 before its first change. */
  async read(tenantId: string): Promise<number> {
    const doc = await this.docs.get(tenantId);
    return typeof doc?.version === 'number' ? doc.version : 0;
  }

  /** Reads the tenant's stored version and confirms it in `versions` (TenantVersions.confirm). */
  async confirm(tenantId: string): Promise<number> {
    const startedAt = Date.now();
    const version = await this.read(tenantId);
    this.versions.confirm(tenantId, version, startedAt);
    return version;
  }
}
