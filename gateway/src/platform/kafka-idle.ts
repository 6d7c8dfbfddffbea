/**
 * kafkajs 2.2.4 (its latest release) keeps a 1 ms timer loop running on every broker connection while nothing waits
 * in the connection's request queue: `scheduleCheckPendingRequests` arms `setTimeout(check, throttledUntil − now)`,
 * which is negative when unthrottled, and the check re-arms it (tulios/kafkajs#1556, #1704; fixes proposed in #1667
 * and #1768, not released). An idle service spent 2–3 % of a core on it. With nothing pending and no throttle there is
 * nothing to check: a new request schedules its own check when it is queued. Installed once per process, before the
 * first connection; a kafkajs release with the fix makes it a no-op.
 */
interface RequestQueueLike {
  pending: unknown[];
  throttledUntil: number;
  scheduleCheckPendingRequests(): void;
}

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
}
