import { adminPortOf, loggedPort, uniqueName, waitFor, type ServiceProcess } from '../../../deploy/test-support';
import { decodeCounts } from '../../src/store/rate-limit-store';
import { adminCli, closedPort, GatewayProcesses } from './harness';

/** Two gateway processes on one store, as two replicas behind a load balancer. */
const gateways = new GatewayProcesses('gwrl');
const admin = adminCli(gateways.dbName);
const cli = admin.json;

interface Replica {
  process: ServiceProcess;
  url: string;
  adminUrl: string;
}

let replicas: Replica[] = [];

beforeAll(async () => {
  const moderatorAddress = `127.0.0.1:${await closedPort()}`;
  const processes = [0, 1].map(() =>
    gateways.spawn(moderatorAddress, {
      HTTP_HOST: '127.0.0.1',
      ADMIN_HOST: '127.0.0.1',
      API_KEY_CACHE_TTL_MS: '500',
      RATE_LIMIT_SYNC_MS: '100',
      // `exchanged()` waits for two exchanges after the key went quiet: at the default relaxed pace, 5 s each.
      RATE_LIMIT_RELAXED_SYNC_MS: '250',
      CONSOLE_SIGN_IN_PER_MINUTE: '6',
    }),
  );
  replicas = await Promise.all(
    processes.map(async (child) => ({
      process: child,
      url: `http://127.0.0.1:${await loggedPort(child, 'http server listening')}`,
      adminUrl: `http://127.0.0.1:${await adminPortOf(child)}`,
    })),
  );
});
afterAll(() => gateways.close());

const call = (replica: Replica, key: string) =>
  fetch(`${replica.url}/api/v1/settings`, { headers: { authorization: `Bearer ${key}` } });

/** Sends `count` requests one after another; returns the answers. */
async function send(replica: Replica, key: string, count: number): Promise<Response[]> {
  const answers: Response[] = [];
  for (let i = 0; i < count; i++) answers.push(await call(replica, key));
  return answers;
}
const admittedOf = (answers: Response[]) => answers.filter((answer) => answer.status === 200).length;

async function okSyncs(replica: Replica): Promise<number> {
  const text = await (await fetch(`${replica.adminUrl}/metrics`)).text();
  return Number(/^gateway_rate_limit_syncs_total\{outcome="ok"\} (\d+)/m.exec(text)?.[1] ?? 0);
}

/**
 * Waits until every replica has written all it admitted so far and read what every other one wrote: a replica's
 * second exchange counted after a moment started after it, so two rounds of two exchanges each cover write then read.
 */
async function exchanged(): Promise<void> {
  for (let round = 0; round < 2; round++) {
    const before = await Promise.all(replicas.map(okSyncs));
    await waitFor(async () => (await Promise.all(replicas.map(okSyncs))).every((n, i) => n >= before[i]! + 2), {
      timeoutMs: 20000,
      what: 'both replicas to exchange their counts',
    });
  }
}

/**
 * Windows slide, so no request counted here stops counting during a test: tests use hour-long windows (a minute for
 * the console sign-in, whose tests take seconds).
 */
const HOUR_S = 3600;

async function newTenant(): Promise<{ name: string; key: string; keyId: string }> {
  const name = uniqueName('acme');
  await cli('tenant', 'create', name);
  const created = await cli('key', 'create', name);
  return { name, key: created.key as string, keyId: created.id as string };
}

describe('rate limit across gateway replicas', () => {
  it('holds a tenant limit set with the admin CLI across two gateway processes, then refuses with 429', async () => {
    const tenant = await newTenant();
    expect(await cli('tenant', 'rate-limit', tenant.name, '50', String(HOUR_S))).toMatchObject({
      name: tenant.name,
      rateLimit: { requests: 50, windowSeconds: HOUR_S },
    });
    const [a, b] = replicas as [Replica, Replica];

    const first = [...(await send(a, tenant.key, 20)), ...(await send(b, tenant.key, 20))];
    expect(first.map((answer) => answer.status)).toEqual(Array.from({ length: 40 }, () => 200));
    expect(first[0]!.headers.get('ratelimit-limit')).toBe('50');
    await exchanged();

    // Both know 40 are used. A admits exactly the 10 left; B, which may not have read A's last 10 yet, admits at
    // most 10 more: the documented slack of what another replica admitted since the last exchange.
    const fromA = admittedOf(await send(a, tenant.key, 40));
    const fromB = admittedOf(await send(b, tenant.key, 40));
    expect(fromA).toBe(10);
    expect(fromB).toBeLessThanOrEqual(10);
    const total = 40 + fromA + fromB;
    expect(total).toBeGreaterThanOrEqual(50);
    expect(total).toBeLessThanOrEqual(60);

    await exchanged();
    const refused = [...(await send(a, tenant.key, 10)), ...(await send(b, tenant.key, 10))];
    expect(refused.map((answer) => answer.status)).toEqual(Array.from({ length: 20 }, () => 429));
    const answer = refused[0]!;
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(answer.headers.get('ratelimit-limit')).toBe('50');
    expect(answer.headers.get('ratelimit-remaining')).toBe('0');

    // Each replica wrote its own document (a count per slot of the window); together they hold what was admitted.
    const docs = await gateways.db.collection<{ _id: string; counts: string }>('rate_limit_counts').find().toArray();
    const counts = docs.flatMap((doc) =>
      decodeCounts(doc.counts)
        .filter((c) => c.key === tenant.keyId)
        .map((c) => c.count),
    );
    expect(
      new Set(docs.filter((doc) => decodeCounts(doc.counts).some((c) => c.key === tenant.keyId)).map((d) => d._id))
        .size,
    ).toBe(2);
    expect(counts.reduce((sum, n) => sum + n, 0)).toBe(total);
  });

  it('holds the console sign-in limit per client address across the replicas', async () => {
    const signIn = (replica: Replica) =>
      fetch(`${replica.url}/console/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: replica.url },
        body: new URLSearchParams({ email: `${uniqueName('nobody')}@example.com`, password: 'wrong' }).toString(),
      });
    const [a, b] = replicas as [Replica, Replica];
    const first: number[] = [];
    for (const replica of [a, a, a, b, b, b]) first.push((await signIn(replica)).status);
    expect(first).toEqual([401, 401, 401, 401, 401, 401]);
    await exchanged();
    // 6 a minute between them: each replica alone has seen 3.
    expect([(await signIn(a)).status, (await signIn(b)).status]).toEqual([429, 429]);
  });

  it('applies a changed tenant limit without a restart, and the default again after `default`', async () => {
    const tenant = await newTenant();
    const [a, b] = replicas as [Replica, Replica];
    expect((await call(a, tenant.key)).headers.get('ratelimit-limit')).toBe('360000');

    await cli('tenant', 'rate-limit', tenant.name, '5', String(HOUR_S));
    // Each replica answers with the new limit once its cached key expired (API_KEY_CACHE_TTL_MS): one request each.
    for (const replica of [a, b]) {
      await waitFor(async () => (await call(replica, tenant.key)).headers.get('ratelimit-limit') === '5', {
        what: 'the new limit to apply',
      });
    }
    await exchanged();
    expect(admittedOf(await send(a, tenant.key, 5))).toBe(3);
    await exchanged();
    expect(admittedOf(await send(b, tenant.key, 5))).toBe(0);

    const listed = (await cli('tenant', 'list')).find((t) => t.name === tenant.name);
    expect(listed?.rateLimit).toEqual({ requests: 5, windowSeconds: HOUR_S });
    expect((await cli('tenant', 'rate-limit', tenant.name, 'default')).rateLimit).toBeNull();
    await waitFor(async () => (await call(a, tenant.key)).headers.get('ratelimit-limit') === '360000', {
      what: 'the default limit to apply again',
    });
  });

  it('refuses bad `tenant rate-limit` arguments with a usage error and changes nothing', async () => {
    const tenant = await newTenant();
    for (const args of [['5'], ['-1', '10'], ['5', '0'], ['5', '86401'], ['1000000001', '10'], ['5', '10', '1']]) {
      const failure = admin.exec('tenant', 'rate-limit', tenant.name, ...args);
      await expect(failure).rejects.toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/<requests> .* <windowSeconds>/) as unknown,
      });
    }
    const listed = (await cli('tenant', 'list')).find((t) => t.name === tenant.name);
    expect(listed?.rateLimit).toBeNull();
  });

  it('refuses to set the limit of a tenant that does not exist', async () => {
    await expect(admin.exec('tenant', 'rate-limit', 'no-such-tenant', '5', '10')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no tenant') as unknown,
    });
  });
});
