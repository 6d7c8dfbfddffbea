import { loggedPort, uniqueName, waitFor, adminPortOf, type ServiceProcess } from '../../../deploy/test-support';
import { adminCli, closedPort, GatewayProcesses } from './harness';

const gateways = new GatewayProcesses('gwcli');
const cli = adminCli(gateways.dbName).json;

let gateway: ServiceProcess;

beforeAll(async () => {
  gateway = gateways.spawn(`127.0.0.1:${await closedPort()}`, { API_KEY_CACHE_TTL_MS: '0' });
});
afterAll(() => gateways.close());

describe('admin CLI and the gateway process', () => {
  it('creates a tenant and a key that the running gateway accepts until it is revoked', async () => {
    const name = uniqueName('acme');
    const tenant = await cli('tenant', 'create', name);
    expect(tenant.id).toMatch(/^ten_/);
    const created = await cli('key', 'create', name);
    const key = created.key as string;
    expect(key).toMatch(/^vgl_[0-9a-f]{64}$/);

    // Only a hash and a short prefix are stored.
    const stored = await gateways.db.collection('api_keys').findOne({ _id: created.id as never });
    expect(JSON.stringify(stored)).not.toContain(key);
    expect(stored?.prefix).toBe(key.slice(0, 10));
    const listed = await cli('key', 'list', tenant.id as string);
    expect(JSON.stringify(listed)).not.toContain(key);
    expect((await cli('tenant', 'list')).map((t) => t.name)).toContain(name);

    const port = await loggedPort(gateway, 'http server listening');
    const call = () =>
      fetch(`http://127.0.0.1:${port}/api/v1/settings`, { headers: { authorization: `Bearer ${key}` } });
    expect((await call()).status).toBe(200);
    await cli('key', 'revoke', created.id as string);
    expect((await call()).status).toBe(401);
    await expect(cli('key', 'revoke', created.id as string)).rejects.toThrow(/no active key/);
  });

  it('lets Node fetch read the 413, 415, 401 and 429 answers to 5 MB uploads it refuses unread, alone and after a 415', async () => {
    const name = uniqueName('upload');
    await cli('tenant', 'create', name);
    const key = (await cli('key', 'create', name)).key as string;
    const port = await loggedPort(gateway, 'http server listening');
    /** The status Node's fetch got, or the network error it reported instead. */
    const post = async (bytes: number, headers: Record<string, string>): Promise<number | string> => {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/api/v1/moderate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: Buffer.alloc(bytes, 'x'),
        });
        await response.arrayBuffer();
        return response.status;
      } catch (err) {
        return `${(err as Error).message}: ${(err as { cause?: { code?: string } }).cause?.code ?? ''}`;
      }
    };
    const auth = { authorization: `Bearer ${key}` };
    const FIVE_MB = 5 * 1024 * 1024;
    const outcomes: Array<number | string> = [];
    for (let i = 0; i < 20; i++) outcomes.push(await post(FIVE_MB, auth));
    for (let i = 0; i < 20; i++) {
      outcomes.push(await post(10, { ...auth, 'content-type': 'text/plain' }));
      outcomes.push(await post(FIVE_MB, auth));
    }
    for (let i = 0; i < 5; i++) outcomes.push(await post(FIVE_MB, { ...auth, 'content-type': 'text/plain' }));
    for (let i = 0; i < 5; i++) outcomes.push(await post(FIVE_MB, {}));
    // One request per minute for this tenant's key, which made many in the last minute: 429 from now on.
    await cli('tenant', 'rate-limit', name, '1', '60');
    for (let i = 0; i < 6; i++) outcomes.push(await post(FIVE_MB, auth));
    expect(outcomes).toEqual([
      ...Array<number>(20).fill(413),
      ...Array.from({ length: 20 }, () => [415, 413]).flat(),
      ...Array<number>(5).fill(415),
      ...Array<number>(5).fill(401),
      ...Array<number>(6).fill(429),
    ]);
  }, 120_000);

  it('serves liveness at once and exits cleanly on SIGTERM', async () => {
    const admin = await adminPortOf(gateway);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${admin}/livez`)).status === 200, { what: 'livez' });
    const port = await loggedPort(gateway, 'http server listening');
    const openapi = await fetch(`http://127.0.0.1:${port}/openapi.json`);
    expect(openapi.status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text();
    expect(metrics).toMatch(/gateway_http_requests_total\{method="GET",route="\/openapi.json",status="200"\} 1/);
    expect(metrics).toMatch(/gateway_http_requests_total\{method="GET",route="\/api\/v1\/settings",status="200"\} 1/);
    // Store round trips by command and collection (driver command monitoring): the settings read was a find.
    expect(metrics).toMatch(/gateway_store_commands_total\{command="find",collection="settings"\} [1-9]/);
    // Refused before routing: counted without a route, so labels stay bounded whatever paths clients try.
    expect(metrics).toMatch(/gateway_http_requests_total\{method="GET",route="unmatched",status="401"\} 1/);
    const { code } = await gateway.stop('SIGTERM');
    expect(code).toBe(0);
  });
});
