import { loadConfig } from './config';

const base = { MONGO_URL: 'mongodb://localhost/', KAFKA_BROKERS: 'localhost:9092' };

describe('loadConfig', () => {
  it('reads the retry schedule and the allow-list', () => {
    const config = loadConfig({
      ...base,
      WEBHOOK_RETRY_SCHEDULE_S: '0.2, 0.5,1',
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32, ::1/128',
    });
    expect(config.WEBHOOK_RETRY_SCHEDULE_S).toEqual([0.2, 0.5, 1]);
    expect(config.WEBHOOK_ALLOWED_CIDRS).toEqual(['127.0.0.1/32', '::1/128']);
    expect(config.WEBHOOK_TIMEOUT_MS).toBe(15000);
    expect(config.WEBHOOK_DISABLE_AFTER_S).toBe(432000);
  });

  it.each([
    [{ WEBHOOK_ALLOWED_CIDRS: '10.0.0.0' }, 'WEBHOOK_ALLOWED_CIDRS'],
    [{ WEBHOOK_RETRY_SCHEDULE_S: '5,soon' }, 'WEBHOOK_RETRY_SCHEDULE_S'],
    [{ DELIVERY_CONCURRENCY: '0' }, 'DELIVERY_CONCURRENCY'],
  ])('rejects %j naming the variable', (env, name) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(name);
  });
});
