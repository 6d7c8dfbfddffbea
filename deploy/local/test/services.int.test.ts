import { adminPortOf, spawnService, testServers, waitFor, type ServiceProcess } from '../../test-support';

// Each service starts as its own process, reports liveness and readiness on its admin port, exposes metrics, and
// exits 0 on SIGTERM.
const { kafkaBrokers, mongoUrl } = testServers();
const baseEnv = {
  MONGO_URL: mongoUrl,
  KAFKA_BROKERS: kafkaBrokers.join(','),
  KAFKA_TOPIC_PREFIX: 'foundation.',
  ADMIN_PORT: '0',
  HTTP_PORT: '0',
  GRPC_PORT: '0',
  MODERATOR_ADDRESS: '127.0.0.1:1',
  INGEST_CONSUMER_ENABLED: 'false',
  DELIVERY_WORKER_ENABLED: 'false',
};

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

describe.each(['gateway', 'moderator', 'notifier'] as const)('%s process', (name) => {
  const started: ServiceProcess[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((service) => service.stop('SIGKILL')));
  });

  it('serves /livez, /readyz and /metrics, then exits 0 on SIGTERM', async () => {
    const service = spawnService(name, baseEnv);
    started.push(service);
    const port = await adminPortOf(service);
    expect((await get(port, '/livez')).status).toBe(200);
    await waitFor(async () => (await get(port, '/readyz')).status === 200, { timeoutMs: 30000, what: 'readiness' });
    const metrics = await get(port, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain(`${name}_process_cpu_seconds_total`);

    const { code } = await service.stop('SIGTERM');
    expect(code).toBe(0);
    expect(service.logs().some((line) => line.msg === 'shutdown complete')).toBe(true);
  });

  it('is live but answers 503 on /readyz while MongoDB cannot be reached', async () => {
    const service = spawnService(name, {
      ...baseEnv,
      MONGO_URL: 'mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300',
    });
    started.push(service);
    const port = await adminPortOf(service);
    expect((await get(port, '/livez')).status).toBe(200);
    expect((await get(port, '/readyz')).status).toBe(503);
  });

  it('refuses to start on bad configuration and names every bad variable', async () => {
    const service = spawnService(name, { ...baseEnv, MONGO_URL: '', ADMIN_PORT: 'not-a-port', LOG_LEVEL: 'loud' });
    started.push(service);
    const { code } = await service.exited;
    expect(code).toBe(1);
    for (const variable of ['MONGO_URL', 'ADMIN_PORT', 'LOG_LEVEL']) expect(service.output()).toContain(variable);
  });
});
