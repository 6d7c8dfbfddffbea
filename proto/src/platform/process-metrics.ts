import { collectDefaultMetrics, type Registry } from 'prom-client';

/**
 * Sampling interval of the event-loop delay histogram (`<prefix>_nodejs_eventloop_lag_p99_seconds` and the rest),
 * milliseconds. prom-client samples every 10 ms: its timer woke each idle service 100 times a second, about a third of
 * a percent of a core per process, a quarter of an idle stack's CPU. The histogram's figures are the time between
 * samples, so they read this interval plus the lag: 0.1 s at rest.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/** Node's process metrics (CPU, memory, event loop, GC, handles) under `<prefix>_`. */
export function collectProcessMetrics(registry: Registry, prefix: string): void {
  collectDefaultMetrics({
    register: registry,
    prefix: `${prefix}_`,
    eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
  });
}
