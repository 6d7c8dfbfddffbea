import type { Context, Next } from 'koa';
import { RateLimitedError } from './errors';
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
function refusal(message: string, limit: number, resetMs: number): RateLimitedError {
  const err = new RateLimitedError(message);
  err.headers = { ...limitHeaders(limit, 0, resetMs), 'Retry-After': String(Math.max(1, Math.ceil(resetMs / 1000))) };
  return err;
}

/**
 * `points` requests per `windowSeconds` per key, counted by `limiter` across the gateway replicas like the API's limit
 * (0 points: no limit); for the console sign-in and the appeal page, which key by client address. A refusal adds
 * `Retry-After`.
 */
export function rateLimit(
  limiter: KeyLimiter,
  options: {
    points: number;
    windowSeconds: number;
    keyOf: (ctx: Context) => string;
    message?: string;
  },
) {
  const limit: Limit = { requests: options.points, windowSeconds: options.windowSeconds };
  return async (ctx: Context, next: Next): Promise<void> => {
    if (limit.requests === 0) {
      await next();
      return;
    }
    const verdict = limiter.consume(options.keyOf(ctx), limit);
    if (!verdict.allowed) throw refusal(options.message ?? 'too many requests', limit.requests, verdict.resetMs);
    ctx.set(limitHeaders(limit.requests, verdict.remaining, verdict.resetMs));
    await next();
  };
}

export interface KeyLimiter {
  consume(key: string, limit: Limit): Verdict;
}

/**
 * The API's limit per API key: the key's tenant's own limit when the operator set one, `defaultLimit` otherwise
 * (0 requests: no limit). Decided in memory by `limiter`, which shares its counts with the other gateway replicas.
 */
export function apiKeyRateLimit(limiter: KeyLimiter, defaultLimit: Limit) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const principal = ctx.state.principal as Principal;
    const limit = principal.rateLimit ?? defaultLimit;
    if (limit.requests === 0) {
      await next();
      return;
    }
    const verdict = limiter.consume(principal.keyId, limit);
    if (!verdict.allowed) throw refusal('too many requests for this API key', limit.requests, verdict.resetMs);
    ctx.set(limitHeaders(limit.requests, verdict.remaining, verdict.resetMs));
    await next();
  };
}
