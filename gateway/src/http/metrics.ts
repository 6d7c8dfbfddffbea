import type { Context, Next } from 'koa';
import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * Request count and duration per route pattern (never the raw path, so labels stay bounded) and status. Failures are
 * counted too: this runs outside the error handler's translation, after it set the status.
 */
export function httpMetrics(registry: Registry) {
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests answered, by route and status.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'HTTP request duration, by route and status.',
    labelNames,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return async (ctx: Context, next: Next): Promise<void> => {
    const end = duration.startTimer();
    try {
      await next();
    } finally {
      const labels = {
        method: ctx.method,
        route: typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : 'unmatched',
        status: String(ctx.status),
      };
      end(labels);
      requests.inc(labels);
    }
  };
}
