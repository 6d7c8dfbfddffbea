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
 */
export class ConfigVersionStore {
  private readonly docs: RevisedDocs<VersionContent>;

  constructor(
    db: Db,
    private readonly versions: TenantVersions,
  ) {
    this.docs = new RevisedDocs(db, COLLECTIONS.configVersions);
  }

  /** Raises the tenant's version after a change; returns the new one. */
  async changed(tenantId: string): Promise<number> {
    const { version } = await this.docs.revise(tenantId, (current) => ({ version: (current?.version ?? 0) + 1 }));
    this.versions.observe(tenantId, version);
    return version;
  }

  /** The tenant's stored version, 0 before its first change. */
  async read(tenantId: string): Promise<number> {
    const doc = await this.docs.get(tenantId);
    return typeof doc?.version === 'number' ? doc.version : 0;
  }
}
