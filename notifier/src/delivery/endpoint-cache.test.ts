import { TenantVersions, type EndpointStateDoc, type WebhookEndpointDoc } from '@vigil/proto';
import type { EndpointStateStore } from '../store/endpoint-states';
import type { UpstreamReads } from '../store/upstream-reads';
import { EndpointCache } from './endpoint-cache';

const endpoint: WebhookEndpointDoc = {
  _id: 'we_1',
  tenantId: 'ten_1',
  url: 'https://example.com/hook',
  events: [],
  enabled: true,
  secrets: [{ secret: 'whsec_a', createdAt: new Date(0) }],
  createdAt: new Date(0),
  updatedAt: new Date(0),
};

/** A store that counts its reads and serves what the test sets. */
function countingStore() {
  const reads = { endpoint: 0, state: 0, active: 0 };
  const current: { endpoint: WebhookEndpointDoc | null; state: EndpointStateDoc | null } = { endpoint, state: null };
  const store = {
    endpoint: () => {
      reads.endpoint += 1;
      return Promise.resolve(current.endpoint);
    },
    endpointState: () => {
      reads.state += 1;
      return Promise.resolve(current.state);
    },
    activeEndpoints: () => {
      reads.active += 1;
      return Promise.resolve(current.endpoint ? [current.endpoint] : []);
    },
  } as unknown as UpstreamReads & EndpointStateStore;
  return { store, reads, current };
}

describe('EndpointCache', () => {
  it('reads an endpoint once while its entry is fresh, and again once it expired', async () => {
    jest.useFakeTimers({ now: 1_700_000_000_000 });
    try {
      const { store, reads, current } = countingStore();
      const cache = new EndpointCache(store, store, 5000, new TenantVersions());
      expect((await cache.get('ten_1', 'we_1'))?.endpoint.secrets[0]?.secret).toBe('whsec_a');
      await cache.get('ten_1', 'we_1');
      expect(reads.endpoint).toBe(1);
      current.endpoint = { ...endpoint, secrets: [{ secret: 'whsec_b', createdAt: new Date(1) }] };
      jest.advanceTimersByTime(5001);
      expect((await cache.get('ten_1', 'we_1'))?.endpoint.secrets[0]?.secret).toBe('whsec_b');
      expect(reads.endpoint).toBe(2);
    } finally {
      jest.useRealTimers();
    }
  });

  it('reads the store every time with a ttl of 0', async () => {
    const { store, reads } = countingStore();
    const cache = new EndpointCache(store, store, 0, new TenantVersions());
    await cache.active('ten_1');
    await cache.active('ten_1');
    expect(reads.active).toBe(2);
  });

  it('sees its own process disabling an endpoint at once', async () => {
    const { store } = countingStore();
    const cache = new EndpointCache(store, store, 60_000, new TenantVersions());
    await cache.get('ten_1', 'we_1');
    await cache.active('ten_1');
    cache.changed(endpoint, { disabledAt: new Date(5), disabledReason: 'gone' });
    expect((await cache.get('ten_1', 'we_1'))?.state?.disabledAt).toEqual(new Date(5));
    expect(await cache.active('ten_1')).toHaveLength(1);
  });

  it('remembers a deleted endpoint as deleted', async () => {
    const { store, reads, current } = countingStore();
    current.endpoint = null;
    const cache = new EndpointCache(store, store, 60_000, new TenantVersions());
    expect(await cache.get('ten_1', 'we_1')).toBeNull();
    expect(await cache.get('ten_1', 'we_1')).toBeNull();
    expect(reads.endpoint).toBe(1);
  });

  it('reads the endpoint and the list again, however fresh, once a newer configuration version is seen', async () => {
    const { store, reads, current } = countingStore();
    const versions = new TenantVersions();
    versions.observe('ten_1', 3);
    const cache = new EndpointCache(store, store, 60_000, versions);
    await cache.get('ten_1', 'we_1');
    expect(await cache.active('ten_1')).toHaveLength(1);
    current.endpoint = { ...endpoint, secrets: [{ secret: 'whsec_b', createdAt: new Date(1) }] };
    // An older or equal version changes nothing; another tenant's neither.
    versions.observe('ten_1', 2);
    versions.observe('ten_2', 9);
    expect((await cache.get('ten_1', 'we_1'))?.endpoint.secrets[0]?.secret).toBe('whsec_a');
    await cache.active('ten_1');
    expect(reads).toMatchObject({ endpoint: 1, active: 1 });
    versions.observe('ten_1', 4);
    expect((await cache.get('ten_1', 'we_1'))?.endpoint.secrets[0]?.secret).toBe('whsec_b');
    current.endpoint = null;
    expect(await cache.active('ten_1')).toHaveLength(0);
    expect(reads).toMatchObject({ endpoint: 2, active: 2 });
    // Read at version 4: fresh again until a newer one.
    await cache.get('ten_1', 'we_1');
    await cache.active('ten_1');
    expect(reads).toMatchObject({ endpoint: 2, active: 2 });
  });
});
