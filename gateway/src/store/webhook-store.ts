import { randomBytes } from 'node:crypto';
import type { Collection, Db, Filter } from 'mongodb';
import { COLLECTIONS, type EndpointStateDoc, ulid, type WebhookEndpointDoc, type WebhookEventName } from '@vigil/proto';
import type { ConfigVersionStore } from './config-version-store';
import { RevisedDocs } from './revised-docs';

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

/** The endpoint is gone, or another tenant's: a change refused inside its revision. */
class NoEndpoint extends Error {}

/**
 * Webhook endpoints (written here only), with read access to the notifier's state and delivery log. Every change
 * raises the tenant's configuration version before it returns, so the notifier reloads the tenant's endpoints before
 * it fans out any event of a request that starts after the answer. Changes go through RevisedDocs: FerretDB v1 writes
 * an update as the whole document it read, so a conditional update or a `$set` of other fields could drop a secret a
 * concurrent rotation had just answered with.
 */
export class WebhookStore {
  private readonly endpoints: Collection<WebhookEndpointDoc>;
  private readonly states: Collection<EndpointStateDoc>;
  private readonly deliveries: Collection<DeliveryView>;
  private readonly revised: RevisedDocs<WebhookEndpointDoc>;

  constructor(
    db: Db,
    private readonly configVersions: ConfigVersionStore,
  ) {
    this.endpoints = db.collection(COLLECTIONS.webhookEndpoints);
    this.states = db.collection(COLLECTIONS.endpointStates);
    this.deliveries = db.collection(COLLECTIONS.deliveries);
    this.revised = new RevisedDocs(db, COLLECTIONS.webhookEndpoints);
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
    const doc = await this.change(tenantId, id, (current) => ({ ...current, ...patch, updatedAt: new Date() }));
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
   * and expired ones are dropped. Concurrent rotations all land, each on top of the one before it; null when the
   * endpoint is gone.
   */
  async rotateSecret(
    endpoint: WebhookEndpointDoc,
    overlapSeconds: number,
  ): Promise<{ doc: WebhookEndpointDoc; secret: string; previousExpiresAt: Date } | null> {
    const now = new Date();
    const previousExpiresAt = new Date(now.getTime() + overlapSeconds * 1000);
    const secret = newSecret();
    const doc = await this.change(endpoint.tenantId, endpoint._id, (current) => {
      const kept = current.secrets
        .filter((entry) => entry.expiresAt === undefined || entry.expiresAt > now)
        .map((entry) => ({
          ...entry,
          expiresAt: entry.expiresAt && entry.expiresAt < previousExpiresAt ? entry.expiresAt : previousExpiresAt,
        }))
        .filter((entry) => entry.expiresAt > now);
      return { ...current, secrets: [{ secret, createdAt: now }, ...kept], updatedAt: now };
    });
    if (!doc) return null;
    await this.configVersions.changed(endpoint.tenantId);
    return { doc, secret, previousExpiresAt };
  }

  /** The tenant's endpoint as `apply` makes it from the stored one, stored as its next revision; null when gone. */
  private async change(
    tenantId: string,
    id: string,
    apply: (current: WebhookEndpointDoc) => WebhookEndpointDoc,
  ): Promise<WebhookEndpointDoc | null> {
    try {
      return await this.revised.revise(id, (current) => {
        if (!current || current.tenantId !== tenantId) throw new NoEndpoint();
        // The revision's own fields are written by RevisedDocs, not carried in the content.
        const { epoch, revision, ...stored } = current;
        void epoch;
        void revision;
        return apply(stored);
      });
    } catch (err) {
      if (err instanceof NoEndpoint) return null;
      throw err;
    }
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
