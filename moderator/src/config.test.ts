import { specServiceEnv } from '../../deploy/test-support/service-config-spec';
import { loadConfig } from './config';

const base = {
  MONGO_URL: 'mongodb://localhost/',
  KAFKA_BROKERS: 'localhost:9092',
  MODERATOR_GRPC_TOKEN: 'x'.repeat(32),
};

describe('loadConfig', () => {
  specServiceEnv(loadConfig, base);

  it('reads the brokers as a list', () => {
    expect(loadConfig({ ...base, KAFKA_BROKERS: 'kafka-0:9092, kafka-1:9092' }).KAFKA_BROKERS).toEqual([
      'kafka-0:9092',
      'kafka-1:9092',
    ]);
  });

  it.each([
    [{ KAFKA_BROKERS: 'kafka:9092,kafka-1' }, 'KAFKA_BROKERS'],
    [{ MONGO_URL: 'mongodb://localhost:70000/' }, 'MONGO_URL'],
    [{ OPENAI_BASE_URL: 'api.openai.com:443' }, 'OPENAI_BASE_URL'],
    [{ LLM_BASE_URL: 'localhost:8080/v1' }, 'LLM_BASE_URL'],
    [{ LLM_BASE_URL: 'ftp://llm.example/v1' }, 'LLM_BASE_URL'],
  ])('refuses %j naming the variable', (env, name) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(name);
  });
});
