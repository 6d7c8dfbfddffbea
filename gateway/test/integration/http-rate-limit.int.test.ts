import { startGateway, type Gateway } from './harness';

// The per-key rate limit as the API answers it: 429 with Retry-After and RateLimit-* headers, per key.
describe('rate limit', () => {
  let limited: Gateway;
  beforeAll(async () => {
    limited = await startGateway({ rateLimitPoints: 3, rateLimitWindowSeconds: 86400 });
  });
  afterAll(async () => {
    await limited.close();
  });

  it('returns 429 rate_limited with Retry-After once a key used its points, other keys unaffected', async () => {
    const first = await limited.newTenant();
    const second = await limited.newTenant();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await limited.request('GET', '/api/v1/rules', { key: first.key })).status);
    expect(statuses).toEqual([200, 200, 200]);
    const refused = await limited.request('GET', '/api/v1/rules', { key: first.key });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit-limit')).toBe('3');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect((await limited.request('GET', '/api/v1/rules', { key: second.key })).status).toBe(200);
  });
});
