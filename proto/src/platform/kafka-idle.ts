/**
 * kafkajs 2.2.4 (its latest release) keeps a 1 ms timer loop running on every broker connection while nothing waits
 * in the connection's request queue: `scheduleCheckPendingRequests` arms `setTimeout(check, throttledUntil − now)`,
 * which is negative when unthrottled, and the check re-arms it (tulios/kafkajs#1556, #1704; fixes proposed in #1667
 * and #1768, not released). An idle service spent 2–3 % of a core on it. With nothing pending and no throttle there is
 * nothing to check: a new request schedules its own check when it is queued. Installed once per process, before the
 * first connection; a kafkajs release with the fix makes it a no-op.
 *
 * Each connection also checks its requests in flight for their timeout every 100 ms (`scheduleRequestTimeoutCheck`):
 * 10 wake-ups a second per connection, idle or not, which were most of an idle service's wake-ups (30 a second in
 * the moderator). The same check runs every second here: a request times out at most a second past its
 * `requestTimeout` (30 s by default) instead of a tenth.
 */
interface RequestQueueLike {
  pending: unknown[];
  throttledUntil: number;
  scheduleCheckPendingRequests(): void;
  scheduleRequestTimeoutCheck(): void;
  enforceRequestTimeout: boolean;
  requestTimeout: number;
  requestTimeoutIntervalId: NodeJS.Timeout | null;
  inflight: Map<number, { sentAt: number; requestTimeout: number; timeoutRequest(): void }>;
  isConnected(): boolean;
  destroy(): void;
}

/** How often a connection checks its requests in flight for their timeout, milliseconds (kafkajs: 100). */
export const REQUEST_TIMEOUT_CHECK_MS = 1000;

let installed = false;

export function stopIdleKafkaTimers(): void {
  if (installed) return;
  installed = true;
  // A deep import: the class is not exported by kafkajs' entry point.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueLike };
  const proto = RequestQueue.prototype;
  const schedule = Object.getOwnPropertyDescriptor(proto, 'scheduleCheckPendingRequests')?.value as (
    this: RequestQueueLike,
  ) => void;
  proto.scheduleCheckPendingRequests = function (this: RequestQueueLike): void {
    if (this.pending.length === 0 && this.throttledUntil <= Date.now()) return;
    schedule.call(this);
  };
  // kafkajs' own check, at REQUEST_TIMEOUT_CHECK_MS.
  proto.scheduleRequestTimeoutCheck = function (this: RequestQueueLike): void {
    if (!this.enforceRequestTimeout) return;
    this.destroy();
    this.requestTimeoutIntervalId = setInterval(
      () => {
        this.inflight.forEach((request) => {
          if (Date.now() - request.sentAt > request.requestTimeout) request.timeoutRequest();
        });
        if (!this.isConnected()) this.destroy();
      },
      Math.min(this.requestTimeout, REQUEST_TIMEOUT_CHECK_MS),
    );
  };
}
