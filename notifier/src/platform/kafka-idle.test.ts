import { stopIdleKafkaTimers } from './kafka-idle';

interface Queue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  scheduleCheckPendingRequests(): void;
  destroy(): void;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (options: object) => Queue;
const silent = { debug: () => undefined, warn: () => undefined, error: () => undefined, info: () => undefined };

function queue(): Queue {
  return new RequestQueue({ maxInFlightRequests: null, clientId: 'test', broker: 'b:9092', logger: silent });
}

describe('stopIdleKafkaTimers', () => {
  beforeAll(() => stopIdleKafkaTimers());

  it('arms no timer on a connection with nothing pending and no throttle', () => {
    const idle = queue();
    idle.scheduleCheckPendingRequests();
    expect(idle.throttleCheckTimeoutId).toBeNull();
  });

  it('still schedules the check of a pending request, and of a throttled connection', () => {
    const waiting = queue();
    waiting.pending.push({});
    waiting.scheduleCheckPendingRequests();
    expect(waiting.throttleCheckTimeoutId).not.toBeNull();
    clearTimeout(waiting.throttleCheckTimeoutId!);

    const throttled = queue();
    throttled.throttledUntil = Date.now() + 60_000;
    throttled.scheduleCheckPendingRequests();
    expect(throttled.throttleCheckTimeoutId).not.toBeNull();
    clearTimeout(throttled.throttleCheckTimeoutId!);
  });
});
