import { randomBytes } from 'node:crypto';
import type { Collection, Db, Filter } from 'mongodb';
import { COLLECTIONS, type EndpointStateDoc, ulid, type WebhookEndpointDoc, type WebhookEventName } from '@vigil/proto';
import type { ConfigVersionStore } from './config-version-store';

/** The notifier's delivery log entry, as far as the API shows it (the notifier owns the collection). */
export interface DeliveryView {
  _id: string;
  tenantId: string;
  endpointId: string;
  [field: string]: unknown;
}

const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

export interface EndpointInput {
  url: string;
  description?: string;
  events: WebhookEventName[];
  enabled: boolean;
}

/**
 * Webhook endpoints (written here only), with read access to the notifier's state and delivery log. Every change
 * raises the tenant's configuration version before it returns, so the notifier reloads the tenant's endpoints before
 * it fans out any event of a request that starts after the answer.
 */
export class WebhookStore {
  private readonly endpoints: Collection<WebhookEndpointDoc>;
  private readonly states: Collection<EndpointStateDoc>;
  private readonly deliveries: Collection<DeliveryView>;

  constructor(
    db: Db,
    private readonly configVersions: ConfigVersionStore,
  ) {
    this.endpoints = db.collection(COLLECTIONS.webhookEndpoints);
    this.states = db.collection(COLLECTIONS.endpointStates);
    this.deliveries = db.collection(COLLECTIONS.deliveries);
  }

  async ensureIndexes(): Promise<void> {
    await this.endpoints.createIndex({ tenantId: 1, _id: 1 }, { name: 'tenant' });
  }

  async create(tenantId: string, input: EndpointInput): Promise<WebhookEndpointDoc> {
    const now = new Date();
    const doc: WebhookEndpointDoc = {
      _id: `we_${ulid()}`,
      tenantId,
      url: input.url,
      ...(input.description !== undefined ? { description: input.description } : {}),
      events: input.events,
      enabled: input.enabled,
      secrets: [{ secret: newSecret(), createdAt: now }],
      createdAt: now,
      updatedAt: now,
    };
    await this.endpoints.insertOne(doc);
    await this.configVersions.changed(tenantId);
    return doc;
  }

  /** Endpoints of a tenant (through the `tenant` index; a tenant has few). */
  count(tenantId: string): Promise<number> {
    return this.endpoints.countDocuments({ tenantId });
  }

  get(tenantId: string, id: string): Promise<WebhookEndpointDoc | null> {
    return this.endpoints.findOne({ _id: id, tenantId });
  }

  /** Oldest first (ids are ulids). `undefined` when the cursor is not an endpoint of this tenant. */
  async list(tenantId: string, limit: number, startingAfter?: string) {
    const filter: Filter<WebhookEndpointDoc> = { tenantId };
    if (startingAfter) {
      const cursor = await this.endpoints.findOne({ _id: startingAfter, tenantId }, { projection: { _id: 1 } });
      if (!cursor) return undefined;
      filter._id = { $gt: startingAfter };
    }
    const docs = await this.endpoints
      .find(filter)
      .sort({ _id: 1 })
      .limit(limit + 1)
      .toArray();
    return { docs: docs.slice(0, limit), hasMore: docs.length > limit };
  }

  async update(tenantId: string, id: string, patch: Partial<EndpointInput>): Promise<WebhookEndpointDoc | null> {
    const doc = await this.endpoints.findOneAndUpdate(
      { _id: id, tenantId },
      { $set: { ...patch, updatedAt: new Date() } },
      { returnDocument: 'after' },
    );
    if (doc) await this.configVersions.changed(tenantId);
    return doc;
  }

  async remove(tenantId: string, id: string): Promise<boolean> {
    const result = await this.endpoints.deleteOne({ _id: id, tenantId });
    if (result.deletedCount !== 1) return false;
    await this.configVersions.changed(tenantId);
    return true;
  }

  /**
   * Adds a new signing secret; the current ones stay valid for `overlapSeconds` (never longer than they already were)
   * and expired ones are dropped. Guarded by `updatedAt` so two concurrent rotations cannot lose a secret: the loser
   * gets `null` back as for a conflict.
   */
  async rotateSecret(
    endpoint: WebhookEndpointDoc,
    overlapSeconds: number,
  ): Promise<{ doc: WebhookEndpointDoc; secret: string; previousExpiresAt: Date } | null> {
    const now = new Date();
    const previousExpiresAt = new Date(now.getTime() + overlapSeconds * 1000);
    const kept = endpoint.secrets
      .filter((entry) => entry.expiresAt === undefined || entry.expiresAt > now)
      .map((entry) => ({
        ...entry,
        expiresAt: entry.expiresAt && entry.expiresAt < previousExpiresAt ? entry.expiresAt : previousExpiresAt,
      }))
      .filter((entry) => entry.expiresAt > now);
    const secret = newSecret();
    const secrets = [{ secret, createdAt: now }, ...kept];
    const doc = await this.endpoints.findOneAndUpdate(
      { _id: endpoint._id, tenantId: endpoint.tenantId, updatedAt: endpoint.updatedAt },
      { $set: { secrets, updatedAt: now } },
      { returnDocument: 'after' },
    );
    if (!doc) return null;
    await this.configVersions.changed(endpoint.tenantId);
    return { doc, secret, previousExpiresAt };
  }

  state(id: string): Promise<EndpointStateDoc | null> {
    return this.states.findOne({ _id: id });
  }

  /**
   * Newest first. Delivery ids are digests (the same event and endpoint always give the same id), so order comes from
   * `createdAt`, with the id breaking ties. `undefined` when the cursor is not a delivery of this endpoint.
   */
  async listDeliveries(tenantId: string, endpointId: string, limit: number, startingAfter?: string) {
    const filter: Filter<DeliveryView> = { tenantId, endpointId };
    if (startingAfter) {
      const cursor = await this.deliveries.findOne(
        { _id: startingAfter, tenantId, endpointId },
        { projection: { createdAt: 1 } },
      );
      if (!cursor) return undefined;
      filter.$or = [
        { createdAt: { $lt: cursor.createdAt } },
        { createdAt: cursor.createdAt, _id: { $lt: startingAfter } },
      ];
    }
    const docs = await this.deliveries
      .find(filter)
      .sort({ createdAt: -1, _id: -1 })
      .limit(limit + 1)
      .toArray();
    return { docs: docs.slice(0, limit), hasMore: docs.length > limit };
  }

  getDelivery(tenantId: string, id: string): Promise<DeliveryView | null> {
    return this.deliveries.findOne({ _id: id, tenantId });
  }
}
