import type { EndpointStateDoc, TenantVersions, WebhookEndpointDoc } from '@vigil/proto';
import { LRUCache } from 'lru-cache';
import type { EndpointStateStore } from '../store/endpoint-states';
import type { UpstreamReads } from '../store/upstream-reads';

/** An endpoint with the notifier's own health state of it. */
export interface EndpointView {
  endpoint: WebhookEndpointDoc;
  state: EndpointStateDoc | null;
}

/** Endpoints and tenants' endpoint lists kept at most. */
const MAX_ENTRIES = 10_000;

/**
 * Webhook endpoints as the notifier last read them: the first attempt of a webhook reads no endpoint from the store
 * while its entry is fresh. An entry is fresh while no newer configuration version of its tenant has been seen
 * (`versions`: every event carries the version the moderator knew, which is at least the one the gateway knew when
 * it accepted the request), and for at most `ttlMs`. So a change made through the API (a new, disabled or deleted
 * endpoint, a rotated secret, a new event filter) applies to every event of a request that started after its answer,
 * and to anything else (retries of earlier deliveries) within `ttlMs`. The notifier's own changes to an endpoint's
 * health apply at once in this process.
 */
export class EndpointCache {
  private readonly byId: LRUCache<string, { view: EndpointView | 'none'; version: number }>;
  private readonly byTenant: LRUCache<string, { endpoints: WebhookEndpointDoc[]; version: number }>;

  /** `ttlMs` 0 keeps nothing: every lookup reads the store. */
  constructor(
    private readonly reads: Pick<UpstreamReads, 'endpoint' | 'activeEndpoints'>,
    private readonly states: Pick<EndpointStateStore, 'endpointState'>,
    private readonly ttlMs: number,
    private readonly versions: TenantVersions,
  ) {
    // Wall-clock time, read on every lookup (no cached clock), so that the bound holds to the millisecond.
    const options = { max: MAX_ENTRIES, ttl: Math.max(ttlMs, 1), ttlResolution: 0, perf: { now: () => Date.now() } };
    this.byId = new LRUCache(options);
    this.byTenant = new LRUCache(options);
  }

  /** The tenant's endpoint and its health state, or null when it was deleted. */
  async get(tenantId: string, endpointId: string): Promise<EndpointView | null> {
    const cached = this.byId.get(endpointId);
    // A deleted endpoint stays deleted (ids are never reused): 'none' is never stale.
    if (cached?.view === 'none') return null;
    if (cached && this.versions.fresh(tenantId, cached.version)) return cached.view;
    // The version known before the read: what the read returns is at least that new.
    const version = this.versions.of(tenantId);
    const [endpoint, state] = await Promise.all([
      this.reads.endpoint(endpointId),
      this.states.endpointState(endpointId),
    ]);
    const view = endpoint ? { endpoint, state } : null;
    if (this.ttlMs > 0) this.byId.set(endpointId, { view: view ?? 'none', version });
    return view;
  }

  /** The tenant's enabled endpoints that the notifier has not disabled. */
  async active(tenantId: string): Promise<WebhookEndpointDoc[]> {
    const cached = this.byTenant.get(tenantId);
    if (cached && this.versions.fresh(tenantId, cached.version)) return cached.endpoints;
    const version = this.versions.of(tenantId);
    const endpoints = await this.reads.activeEndpoints(tenantId);
    if (this.ttlMs > 0) this.byTenant.set(tenantId, { endpoints, version });
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
      this.byId.set(endpoint._id, { view: { endpoint: cached.view.endpoint, state: next }, version: cached.version });
    }
    if (state.disabledAt || remove.includes('disabledAt')) this.byTenant.delete(endpoint.tenantId);
  }

  /** Forgets what is known of the endpoint (a command re-enabled it). */
  forget(tenantId: string, endpointId: string): void {
    this.byId.delete(endpointId);
    this.byTenant.delete(tenantId);
  }
}
