import type { Context, Next } from 'koa';
import { RateLimitedError } from '../errors';
import type { Principal } from '../auth/api-key-auth';
import type { Limit, Verdict } from '../rate-limit/window-counter';

/** The draft IETF `RateLimit-*` headers every limited response carries. */
function limitHeaders(limit: number, remaining: number, resetMs: number): Record<string, string> {
  return {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(Math.max(0, remaining)),
    'RateLimit-Reset': String(Math.ceil(resetMs / 1000)),
  };
}

/** A refusal: the headers and `Retry-After`, in the usual error envelope. */
function refusal(message: string, limit: number, resetMs: number, details?: unknown): RateLimitedError {
  const err = new RateLimitedError(message, details);
  err.headers = { ...limitHeaders(limit, 0, resetMs), 'Retry-After': String(Math.max(1, Math.ceil(resetMs / 1000))) };
  return err;
}

export interface KeyLimiter {
  consume(key: string, limit: Limit): Verdict;
}

/**
 * Counts one action of `key` against `limit` in `limiter` (the counts every gateway replica shares), for a bound on how
 * often a use case runs rather than on requests; throws 429 rate_limited with `Retry-After` and `details` when it is
 * used up. A limit of 0 actions is no limit.
 */
export function consumeOrRefuse(
  limiter: KeyLimiter,
  key: string,
  limit: Limit,
  message: string,
  details?: unknown,
): void {
  if (limit.requests === 0) return;
  const verdict = limiter.consume(key, limit);
  if (!verdict.allowed) throw refusal(message, limit.requests, verdict.resetMs, details);
}

/**
 * Counts each request under `keyOf(ctx)` against `limitOf(ctx)` (0 requests: no limit) in `limiter`, which shares
 * its counts with the other gateway replicas. A refusal adds `Retry-After`; every answer carries the limit headers.
 */
function limitBy(
  limiter: KeyLimiter,
  keyOf: (ctx: Context) => string,
  limitOf: (ctx: Context) => Limit,
  message: string,
) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const limit = limitOf(ctx);
    if (limit.requests === 0) {
      await next();
      return;
    }
    const verdict = limiter.consume(keyOf(ctx), limit);
    if (!verdict.allowed) throw refusal(message, limit.requests, verdict.resetMs);
    ctx.set(limitHeaders(limit.requests, verdict.remaining, verdict.resetMs));
    await next();
  };
}

/**
 * `points` requests per `windowSeconds` per key (0 points: no limit), for the console sign-in and the appeal page,
 * which key by client address.
 */
export function rateLimit(
  limiter: KeyLimiter,
  options: { points: number; windowSeconds: number; keyOf: (ctx: Context) => string; message?: string },
) {
  const limit: Limit = { requests: options.points, windowSeconds: options.windowSeconds };
  return limitBy(limiter, options.keyOf, () => limit, options.message ?? 'too many requests');
}

/** The API's limit per API key: the key's tenant's own limit when the operator set one, `defaultLimit` otherwise. */
export function apiKeyRateLimit(limiter: KeyLimiter, defaultLimit: Limit) {
  const principalOf = (ctx: Context) => ctx.state.principal as Principal;
  return limitBy(
    limiter,
    (ctx) => principalOf(ctx).keyId,
    (ctx) => principalOf(ctx).rateLimit ?? defaultLimit,
    'too many requests for this API key',
  );
}
