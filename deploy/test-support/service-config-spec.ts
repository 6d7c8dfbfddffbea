import { CONSUMER_TIMING_DEFAULTS } from '@vigil/proto/platform';

/** What a service's `loadConfig` answers for the variables every service reads (proto's `serviceEnv`). */
interface ServiceConfig {
  KAFKA_BROKERS: string[];
}

/** What a service's `loadConfig` answers for the variables every consumer reads (proto's `consumerEnv`). */
interface ConsumerConfig extends ServiceConfig {
  KAFKA_SESSION_TIMEOUT_MS: number;
  KAFKA_HEARTBEAT_INTERVAL_MS: number;
  KAFKA_REBALANCE_TIMEOUT_MS: number;
}

/** Values of the shared variables that every service's schema refuses, naming the variable. */
const SHARED_REFUSALS: Array<[Record<string, string>, string]> = [
  [{ KAFKA_BROKERS: '3.9.1' }, 'KAFKA_BROKERS'],
  [{ KAFKA_BROKERS: 'kafka:0' }, 'KAFKA_BROKERS'],
  [{ KAFKA_BROKERS: 'kafka:65536' }, 'KAFKA_BROKERS'],
  [{ KAFKA_BROKERS: 'kafka:9092,kafka-1' }, 'KAFKA_BROKERS'],
  [{ MONGO_URL: '3.9.1' }, 'MONGO_URL'],
  [{ MONGO_URL: 'localhost:27017' }, 'MONGO_URL'],
  [{ MONGO_URL: 'mongo:27017' }, 'MONGO_URL'],
  [{ MONGO_URL: 'http://localhost:27017/' }, 'MONGO_URL'],
  [{ MONGO_URL: 'mongodb://localhost:70000/' }, 'MONGO_URL'],
  [{ MONGO_URL: 'mongodb+srv://cluster.example:27017/' }, 'MONGO_URL'],
];

/**
 * The cases every service's config spec shares: the variables spread in from proto's `serviceEnv` keep their checks in
 * that service's schema, and `refusals` (the service's own variables) are refused too. Call inside the service's
 * `describe('loadConfig')`, with the environment its schema needs at least.
 */
export function specServiceEnv(
  loadConfig: (env: Record<string, string>) => ServiceConfig,
  base: Record<string, string>,
  refusals: Array<[Record<string, string>, string]> = [],
) {
  it.each(['kafka-0:9092,kafka-1:9092', 'kafka-0:9092, kafka-1:9092'])('reads the brokers %j as a list', (brokers) => {
    expect(loadConfig({ ...base, KAFKA_BROKERS: brokers }).KAFKA_BROKERS).toEqual(['kafka-0:9092', 'kafka-1:9092']);
  });

  it.each([...SHARED_REFUSALS, ...refusals])('refuses %j naming the variable', (env, name) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(name);
  });
}

/** specServiceEnv for a service that consumes Kafka: also proto's `consumerEnv`, with its defaults. */
export function specConsumerEnv(
  loadConfig: (env: Record<string, string>) => ConsumerConfig,
  base: Record<string, string>,
  refusals: Array<[Record<string, string>, string]> = [],
) {
  specServiceEnv(loadConfig, base, refusals);

  it('defaults the consumer timing to the values consumer-timing.ts explains', () => {
    const config = loadConfig(base);
    expect({
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
      rebalanceTimeoutMs: config.KAFKA_REBALANCE_TIMEOUT_MS,
    }).toEqual(CONSUMER_TIMING_DEFAULTS);
  });
}
