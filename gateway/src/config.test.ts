import { specServiceEnv } from '../../deploy/test-support/service-config-spec';
import { loadConfig } from './config';

const base = {
  MONGO_URL: 'mongodb://localhost/',
  KAFKA_BROKERS: 'localhost:9092',
  MODERATOR_ADDRESS: 'localhost:50051',
  MODERATOR_GRPC_TOKEN: 'x'.repeat(32),
};

describe('loadConfig', () => {
  specServiceEnv(loadConfig, base, [
    [{ MODERATOR_ADDRESS: 'vigil-moderator' }, 'MODERATOR_ADDRESS'],
    [{ MODERATOR_ADDRESS: '3.9.1' }, 'MODERATOR_ADDRESS'],
  ]);

  it('takes a DNS target for the moderators', () => {
    expect(loadConfig({ ...base, MODERATOR_ADDRESS: 'dns:///vigil-moderator-headless:50051' }).MODERATOR_ADDRESS).toBe(
      'dns:///vigil-moderator-headless:50051',
    );
  });
});
