import { CONSUMER_TIMING_DEFAULTS } from '@vigil/proto';
import { loadConfig } from './config';

const base = {
  MONGO_URL: 'mongodb://localhost/',
  KAFKA_BROKERS: 'localhost:9092',
  MODERATOR_GRPC_TOKEN: 'x'.repeat(32),
};

describe('loadConfig', () => {
  it('defaults the consumer timing to the values consumer-timing.ts explains', () => {
    const config = loadConfig(base);
    expect({
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
      rebalanceTimeoutMs: config.KAFKA_REBALANCE_TIMEOUT_MS,
    }).toEqual(CONSUMER_TIMING_DEFAULTS);
  });

  it('reads the brokers as a list', () => {
    expect(loadConfig({ ...base, KAFKA_BROKERS: 'kafka-0:9092, kafka-1:9092' }).KAFKA_BROKERS).toEqual([
      'kafka-0:9092',
      'kafka-1:9092',
    ]);
  });

  it.each([
    [{ KAFKA_BROKERS: '3.9.1' }, 'KAFKA_BROKERS'],
    [{ KAFKA_BROKERS: 'kafka:9092,kafka-1' }, 'KAFKA_BROKERS'],
    [{ MONGO_URL: 'localhost:27017' }, 'MONGO_URL'],
    [{ MONGO_URL: 'mongodb://localhost:70000/' }, 'MONGO_URL'],
    [{ OPENAI_BASE_URL: 'api.openai.com:443' }, 'OPENAI_BASE_URL'],
    [{ LLM_BASE_URL: 'localhost:8080/v1' }, 'LLM_BASE_URL'],
    [{ LLM_BASE_URL: 'ftp://llm.example/v1' }, 'LLM_BASE_URL'],
  ])('refuses %j naming the variable', (env, name) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(name);
  });
});
