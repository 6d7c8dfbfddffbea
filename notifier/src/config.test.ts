import fs from 'node:fs';
import path from 'node:path';
import { specConsumerEnv } from '../../deploy/test-support/service-config-spec';
import { loadConfig } from './config';
import { signatureHeaders } from './delivery/sign';
import { JITTER } from './domain/retry-policy';

const base = { MONGO_URL: 'mongodb://localhost/', KAFKA_BROKERS: 'localhost:9092' };

describe('loadConfig', () => {
  specConsumerEnv(loadConfig, base, [
    [{ WEBHOOK_ALLOWED_CIDRS: '10.0.0.0' }, 'WEBHOOK_ALLOWED_CIDRS'],
    [{ WEBHOOK_RETRY_SCHEDULE_S: '5,soon' }, 'WEBHOOK_RETRY_SCHEDULE_S'],
    [{ DELIVERY_CONCURRENCY: '0' }, 'DELIVERY_CONCURRENCY'],
  ]);

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
});

describe('the webhooks guide', () => {
  const section = fs.readFileSync(path.join(__dirname, '../../docs/webhooks.md'), 'utf8').replace(/\s+/g, ' ');
  const spoken = (seconds: number) =>
    seconds < 60 ? `${seconds} s` : seconds < 3600 ? `${seconds / 60} min` : `${seconds / 3600} h`;

  it('states the default retry schedule, timeouts and disable window', () => {
    const config = loadConfig(base);
    const delays = config.WEBHOOK_RETRY_SCHEDULE_S.map(spoken);
    expect(section).toContain(`tried again after ${delays.slice(0, -1).join(', ')} and ${delays.at(-1)}`);
    expect(section).toContain(`each ±${JITTER * 100} %`);
    expect(section).toContain(`${config.WEBHOOK_RETRY_SCHEDULE_S.length + 1} attempts`);
    expect(section).toContain(`\`WEBHOOK_TIMEOUT_MS\` (${spoken(config.WEBHOOK_TIMEOUT_MS / 1000)})`);
    expect(section).toContain(`\`WEBHOOK_RETRY_AFTER_MAX_S\`, ${spoken(config.WEBHOOK_RETRY_AFTER_MAX_S)}`);
    expect(section).toContain(`\`WEBHOOK_DISABLE_AFTER_S\` (${config.WEBHOOK_DISABLE_AFTER_S / 86400} days)`);
  });

  it('names every signature header the notifier sends', () => {
    const headers = signatureHeaders({ webhookId: 'msg_x', timestamp: 1, body: '{}', secrets: ['whsec_AAAA'] });
    for (const name of Object.keys(headers)) expect(section.toLowerCase()).toContain(`\`${name}\``);
  });
});
