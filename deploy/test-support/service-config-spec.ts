import { CONSUMER_TIMING_DEFAULTS } from '@vigil/proto';

/** What a service's `loadConfig` answers for the variables every consumer reads (proto's `consumerEnv`). */
interface ConsumerConfig {
  KAFKA_SESSION_TIMEOUT_MS: number;
  KAFKA_HEARTBEAT_INTERVAL_MS: number;
  KAFKA_REBALANCE_TIMEOUT_MS: number;
}

/**
 * The cases every service's config spec shares: the variables spread in from proto's `serviceEnv` and `consumerEnv`
 * keep their defaults and checks in that service's schema. Call inside the service's `describe('loadConfig')`, with
 * the environment its schema needs at least.
 */
export function specServiceEnv(
  loadConfig: (env: Record<string, string>) => ConsumerConfig,
  base: Record<string, string>,
) {
  it('defaults the consumer timing to the values consumer-timing.ts explains', () => {
    const config = loadConfig(base);
    expect({
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
      rebalanceTimeoutMs: config.KAFKA_REBALANCE_TIMEOUT_MS,
    }).toEqual(CONSUMER_TIMING_DEFAULTS);
  });

  it.each([
    [{ KAFKA_BROKERS: '3.9.1' }, 'KAFKA_BROKERS'],
    [{ MONGO_URL: 'localhost:27017' }, 'MONGO_URL'],
  ])('refuses %j naming the variable', (env, name) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(name);
  });
}
