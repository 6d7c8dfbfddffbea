import type { EndpointStateDoc, WebhookEndpointDoc } from '@vigil/proto';
import { LRUCache } from 'lru-cache';
import type { DeliveryStore } from '../store/delivery-store';

/** An endpoint with the notifier's own health state of it. */
export interface EndpointView {
  endpoint: WebhookEndpointDoc;
  state: EndpointStateDoc | null;
}

/** Endpoints and tenants' endpoint lists kept at most. */
const MAX_ENTRIES = 10_000;

/**
 * Webhook endpoints as the notifier last read them, for at most `ttlMs`: the first attempt of a webhook reads no
 * endpoint from the store while its entry is fresh. A change made through the API (a disabled endpoint, a rotated
 * secret, a new endpoint) takes effect within `ttlMs`; the notifier's own changes to an endpoint's health apply at
 * once in this process.
 */
export class EndpointCache {
  private readonly byId: LRUCache<string, { view: EndpointView | 'none' }>;
  private readonly byTenant: LRUCache<string, WebhookEndpointDoc[]>;

  /** `ttlMs` 0 keeps nothing: every lookup reads the store. */
  constructor(
    private readonly store: DeliveryStore,
    private readonly ttlMs: number,
  ) {
    // Wall-clock time, read on every lookup (no cached clock), so that the bound holds to the millisecond.
    const options = { max: MAX_ENTRIES, ttl: Math.max(ttlMs, 1), ttlResolution: 0, perf: { now: () => Date.now() } };
    this.byId = new LRUCache(options);
    this.byTenant = new LRUCache(options);
  }

  /** The endpoint and its health state, or null when it was deleted. */
  async get(endpointId: string): Promise<EndpointView | null> {
    const cached = this.byId.get(endpointId);
    if (cached) return cached.view === 'none' ? null : cached.view;
    const [endpoint, state] = await Promise.all([
      this.store.endpoint(endpointId),
      this.store.endpointState(endpointId),
    ]);
    const view = endpoint ? { endpoint, state } : null;
    if (this.ttlMs > 0) this.byId.set(endpointId, { view: view ?? 'none' });
    return view;
  }

  /** The tenant's enabled endpoints that the notifier has not disabled. */
  async active(tenantId: string): Promise<WebhookEndpointDoc[]> {
    const cached = this.byTenant.get(tenantId);
    if (cached) return cached;
    const endpoints = await this.store.activeEndpoints(tenantId);
    if (this.ttlMs > 0) this.byTenant.set(tenantId, endpoints);
    return endpoints;
  }

  /** This process changed the endpoint's health state: later reads here see it at once. */
  changed(
    endpoint: WebhookEndpointDoc,
    state: Partial<EndpointStateDoc>,
    remove: (keyof EndpointStateDoc)[] = [],
  ): void {
    const cached = this.byId.get(endpoint._id);
    if (cached && cached.view !== 'none') {
      const next = { ...(cached.view.state ?? { _id: endpoint._id, tenantId: endpoint.tenantId }), ...state };
      for (const key of remove) delete (next as Partial<EndpointStateDoc>)[key];
      this.byId.set(endpoint._id, { view: { endpoint: cached.view.endpoint, state: next } });
    }
    if (state.disabledAt || remove.includes('disabledAt')) this.byTenant.delete(endpoint.tenantId);
  }

  /** Forgets what is known of the endpoint (a command re-enabled it). */
  forget(tenantId: string, endpointId: string): void {
    this.byId.delete(endpointId);
    this.byTenant.delete(tenantId);
  }
}
