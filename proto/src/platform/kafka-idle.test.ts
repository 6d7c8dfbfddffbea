import { REQUEST_TIMEOUT_CHECK_MS, stopIdleKafkaTimers } from './kafka-idle';

interface Queue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  scheduleCheckPendingRequests(): void;
  scheduleRequestTimeoutCheck(): void;
  inflight: Map<number, { sentAt: number; requestTimeout: number; timeoutRequest(): void }>;
  destroy(): void;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (options: object) => Queue;
const silent = { debug: () => undefined, warn: () => undefined, error: () => undefined, info: () => undefined };

function queue(): Queue {
  return new RequestQueue({
    maxInFlightRequests: null,
    clientId: 'test',
    broker: 'b:9092',
    logger: silent,
    requestTimeout: 30_000,
    enforceRequestTimeout: true,
    isConnected: () => true,
  });
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

  it('checks the requests in flight for their timeout once a second, not ten times', () => {
    jest.useFakeTimers();
    try {
      const connection = queue();
      connection.scheduleRequestTimeoutCheck();
      const timedOut = jest.fn();
      connection.inflight.set(1, { sentAt: Date.now(), requestTimeout: 50, timeoutRequest: timedOut });
      jest.advanceTimersByTime(REQUEST_TIMEOUT_CHECK_MS - 1);
      expect(timedOut).not.toHaveBeenCalled();
      jest.advanceTimersByTime(1);
      expect(timedOut).toHaveBeenCalledTimes(1);
      connection.destroy();
    } finally {
      jest.useRealTimers();
    }
  });
});
