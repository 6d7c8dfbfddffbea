import { COLLECTIONS, type RecordDoc, type UserDoc, type WebhookEndpointDoc } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';
import type { EndpointStateStore } from './endpoint-states';

/**
 * What the notifier reads of collections other services write: the gateway's `webhook_endpoints` (where events go)
 * and the moderator's `records` and `users` projections (what webhook bodies say). It writes none of them.
 */
export class UpstreamReads {
  private readonly endpoints: Collection<WebhookEndpointDoc>;
  private readonly records: Collection<RecordDoc>;
  private readonly users: Collection<UserDoc>;

  constructor(
    db: Db,
    private readonly states: EndpointStateStore,
  ) {
    this.endpoints = db.collection(COLLECTIONS.webhookEndpoints);
    this.records = db.collection(COLLECTIONS.records);
    this.users = db.collection(COLLECTIONS.users);
  }

  /**
   * Enabled endpoints of the tenant that the notifier has not disabled. Their states are read by `_id` one by one: a
   * tenant has a few endpoints (capped), and FerretDB answers an `$in` filter with a scan of the whole collection.
   */
  async activeEndpoints(tenantId: string): Promise<WebhookEndpointDoc[]> {
    const endpoints = await this.endpoints.find({ tenantId, enabled: true }).toArray();
    const disabled = await Promise.all(endpoints.map((endpoint) => this.states.isDisabled(endpoint._id)));
    return endpoints.filter((_, index) => !disabled[index]);
  }

  endpoint(endpointId: string): Promise<WebhookEndpointDoc | null> {
    return this.endpoints.findOne({ _id: endpointId });
  }

  /** The record if it belongs to the tenant. */
  async record(tenantId: string, recordId: string): Promise<RecordDoc | null> {
    return ownedBy(await this.records.findOne({ _id: recordId }), tenantId);
  }

  /** The user if it belongs to the tenant. */
  async user(tenantId: string, userId: string): Promise<UserDoc | null> {
    return ownedBy(await this.users.findOne({ _id: userId }), tenantId);
  }
}

/**
 * The document if it belongs to the tenant. Looked up by `_id` alone and checked here: FerretDB v1 answers any other
 * filter with a scan of the whole collection, and this runs once per webhook.
 */
function ownedBy<T extends { tenantId: string }>(doc: T | null, tenantId: string): T | null {
  return doc && doc.tenantId === tenantId ? doc : null;
}
