import type { WebhookCommand } from '@vigil/proto';
import pino from 'pino';
import { WebhookCommands, type WebhookCommandsOptions } from './webhook-commands';

const log = pino({ level: 'silent' });
const base = { id: 'cmd_1', tenantId: 'ten_1', issuedAt: '2026-01-02T03:04:05.678Z' };

function setup() {
  const calls: string[] = [];
  let woken = 0;
  const options: WebhookCommandsOptions = {
    store: {
      retry: (tenantId, deliveryId) => {
        calls.push(`retry ${tenantId} ${deliveryId}`);
        return Promise.resolve(true);
      },
      replay: (tenantId, endpointId, since) => {
        calls.push(`replay ${tenantId} ${endpointId} ${since.toISOString()}`);
        return Promise.resolve(2);
      },
    },
    endpointStates: {
      enableEndpoint: (tenantId, endpointId) => {
        calls.push(`enable ${tenantId} ${endpointId}`);
        return Promise.resolve(true);
      },
    },
    endpoints: { forget: (tenantId, endpointId) => calls.push(`forget ${tenantId} ${endpointId}`) },
    onWork: () => (woken += 1),
  };
  return { commands: new WebhookCommands(options), calls, woken: () => woken };
}

describe('WebhookCommands', () => {
  it.each<[string, WebhookCommand, string[]]>([
    ['a delivery retry', { ...base, type: 'RetryDelivery', deliveryId: 'dlv_1' }, ['retry ten_1 dlv_1']],
    [
      'an endpoint replay',
      { ...base, type: 'ReplayEndpoint', endpointId: 'we_1', since: '2026-01-01T00:00:00.000Z' },
      ['replay ten_1 we_1 2026-01-01T00:00:00.000Z'],
    ],
    [
      'an endpoint re-enabled (its cached state forgotten)',
      { ...base, type: 'EnableEndpoint', endpointId: 'we_1' },
      ['enable ten_1 we_1', 'forget ten_1 we_1'],
    ],
  ])('applies %s and wakes the scheduler', async (_name, command, calls) => {
    const t = setup();
    await t.commands.apply(command, log);
    expect(t.calls).toEqual(calls);
    expect(t.woken()).toBe(1);
  });

  it('skips a replay whose `since` is not a time, changing nothing', async () => {
    const t = setup();
    await t.commands.apply({ ...base, type: 'ReplayEndpoint', endpointId: 'we_1', since: 'yesterday' }, log);
    expect(t.calls).toEqual([]);
    expect(t.woken()).toBe(0);
  });
});
