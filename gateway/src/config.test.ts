import { loadConfig } from './config';

const base = {
  MONGO_URL: 'mongodb://localhost/',
  KAFKA_BROKERS: 'localhost:9092',
  MODERATOR_ADDRESS: 'localhost:50051',
  MODERATOR_GRPC_TOKEN: 'x'.repeat(32),
};

describe('loadConfig', () => {
  it('takes a DNS target for the moderators', () => {
    expect(loadConfig({ ...base, MODERATOR_ADDRESS: 'dns:///vigil-moderator-headless:50051' }).MODERATOR_ADDRESS).toBe(
      'dns:///vigil-moderator-headless:50051',
    );
  });

  it('reads the brokers as a list', () => {
    expect(loadConfig({ ...base, KAFKA_BROKERS: 'kafka-0:9092,kafka-1:9092' }).KAFKA_BROKERS).toEqual([
      'kafka-0:9092',
      'kafka-1:9092',
    ]);
  });

  it.each([
    [{ KAFKA_BROKERS: '3.9.1' }, 'KAFKA_BROKERS'],
    [{ KAFKA_BROKERS: 'kafka:0' }, 'KAFKA_BROKERS'],
    [{ MONGO_URL: '3.9.1' }, 'MONGO_URL'],
    [{ MONGO_URL: 'http://localhost:27017/' }, 'MONGO_URL'],
    [{ MODERATOR_ADDRESS: 'vigil-moderator' }, 'MODERATOR_ADDRESS'],
    [{ MODERATOR_ADDRESS: '3.9.1' }, 'MODERATOR_ADDRESS'],
  ])('refuses %j naming the variable', (env, name) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(name);
  });
});
