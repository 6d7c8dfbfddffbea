import type { Context, Next } from 'koa';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimitedError } from './errors';
import type { Principal } from '../auth/api-key-auth';

const byApiKey = (ctx: Context): string => (ctx.state.principal as Principal).keyId;

/**
 * Fixed window of `points` requests per `windowSeconds` per key (0 points: no limit); the key is the API key unless
 * `keyOf` says otherwise (the console and the appeal page key by client address). Every limited response carries the
 * draft IETF `RateLimit-*` headers; a refusal adds `Retry-After`.
 */
export function rateLimit(options: {
  points: number;
  windowSeconds: number;
  keyOf?: (ctx: Context) => string;
  message?: string;
}) {
  const keyOf = options.keyOf ?? byApiKey;
  if (options.points === 0) {
    return async (_ctx: Context, next: Next): Promise<void> => {
      await next();
    };
  }
  const limiter = new RateLimiterMemory({ points: options.points, duration: options.windowSeconds });
  const headers = (res: RateLimiterRes): Record<string, string> => ({
    'RateLimit-Limit': String(options.points),
    'RateLimit-Remaining': String(Math.max(0, res.remainingPoints)),
    'RateLimit-Reset': String(Math.ceil(res.msBeforeNext / 1000)),
  });
  return async (ctx: Context, next: Next): Promise<void> => {
    let res: RateLimiterRes;
    try {
      res = await limiter.consume(keyOf(ctx));
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const err = new RateLimitedError(options.message ?? 'too many requests for this API key');
      err.headers = {
        ...headers(rejection),
        'Retry-After': String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))),
      };
      throw err;
    }
    ctx.set(headers(res));
    await next();
  };
}
