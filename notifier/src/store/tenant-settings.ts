import { COLLECTIONS, DEFAULT_SETTINGS, TenantSettings } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';

type SettingsDoc = { _id: string } & Partial<TenantSettings>;

/**
 * The tenants' settings, which the gateway writes: whether and how to email users, and the appeal window that
 * statements of reasons state (in user emails and in webhooks). The notifier only reads them.
 */
export class TenantSettingsReads {
  private readonly settings: Collection<SettingsDoc>;

  constructor(db: Db) {
    this.settings = db.collection(COLLECTIONS.settings);
  }

  /** The tenant's settings; the defaults when it has none, or when what is stored does not parse. */
  async settingsOf(tenantId: string): Promise<TenantSettings> {
    const doc = await this.settings.findOne({ _id: tenantId });
    if (!doc) return DEFAULT_SETTINGS;
    const parsed = TenantSettings.safeParse({ ...doc, _id: undefined });
    return parsed.success ? parsed.data : DEFAULT_SETTINGS;
  }
}
