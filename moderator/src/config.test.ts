import { specConsumerEnv } from '../../deploy/test-support/service-config-spec';
import { loadConfig } from './config';

const base = {
  MONGO_URL: 'mongodb://localhost/',
  KAFKA_BROKERS: 'localhost:9092',
  MODERATOR_GRPC_TOKEN: 'x'.repeat(32),
};

describe('loadConfig', () => {
  specConsumerEnv(loadConfig, base, [
    [{ OPENAI_BASE_URL: 'api.openai.com:443' }, 'OPENAI_BASE_URL'],
    [{ LLM_BASE_URL: 'localhost:8080/v1' }, 'LLM_BASE_URL'],
    [{ LLM_BASE_URL: 'ftp://llm.example/v1' }, 'LLM_BASE_URL'],
  ]);
});
