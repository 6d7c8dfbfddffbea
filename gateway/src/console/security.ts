import { timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { ForbiddenError, UnsupportedMediaTypeError } from '../errors';
import { refuseUnstorableValues } from '../http/json-body';

/**
 * Everything the console and the appeal page serve comes from this origin: no inline script or style, no frames, forms
 * post here only. `no-referrer` keeps appeal tokens (in the page URL) out of other sites' logs.
 */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export async function securityHeaders(ctx: Context, next: Next): Promise<void> {
  ctx.set({
    'Content-Security-Policy': CSP,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
    'Cross-Origin-Opener-Policy': 'same-origin',
  });
  await next();
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * State-changing requests must come from a page of this origin: a present `Origin` must be the operator's public
 * origin (`PUBLIC_URL`) or the request's own scheme and host (behind `TRUST_PROXY`, the forwarded ones), or `null`
 * with `Sec-Fetch-Site: same-origin`, and the browser must not call the request cross-site or same-site (a sibling subdomain gets SameSite cookies, not our
 * origin). This stands in front of the synchronizer token, not instead of it. The request's `Origin` header itself is
 * never the reference: on Koa 3, `ctx.origin` is that header, so comparing against it let every origin through.
 */
export function checkSameOrigin(ctx: Context, publicOrigin?: string): void {
  const site = ctx.get('sec-fetch-site');
  if (site === 'cross-site' || site === 'same-site') {
    throw new ForbiddenError('cross-site request refused', { code: 'bad_origin' });
  }
  const origin = ctx.get('origin');
  // `Referrer-Policy: no-referrer` makes browsers send `Origin: null` even for our own forms; only Sec-Fetch-Site,
  // which pages cannot set, then tells ours from an opaque origin (a sandboxed frame, a data: URL).
  if (origin === 'null') {
    if (site === 'same-origin') return;
    throw new ForbiddenError('request from an opaque origin refused', { code: 'bad_origin' });
  }
  if (origin !== '' && origin !== publicOrigin && origin !== `${ctx.protocol}://${ctx.host}`) {
    throw new ForbiddenError('cross-origin request refused', { code: 'bad_origin' });
  }
}

/**
 * Applies `checkSameOrigin` to every request that is not GET, HEAD or OPTIONS, before anything else reads it (the
 * rate limit, the body, the session): every state-changing page, sign-in included, and any added later.
 */
export function sameOriginChanges(publicUrl: string | undefined) {
  const publicOrigin = publicUrl ? new URL(publicUrl).origin : undefined;
  return async (ctx: Context, next: Next): Promise<void> => {
    if (!SAFE_METHODS.has(ctx.method)) checkSameOrigin(ctx, publicOrigin);
    await next();
  };
}

/** Constant-time comparison of two tokens (different lengths never match). */
export function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Parses an urlencoded form (and nothing else) up to `limitBytes`; anything else is 415. */
export function formBody(limitBytes: number) {
  const parse = koaBody({
    json: false,
    urlencoded: true,
    text: false,
    multipart: false,
    formLimit: limitBytes,
    parsedMethods: [HttpMethodEnum.POST],
  });
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.request.length > 0 && !ctx.is('application/x-www-form-urlencoded')) {
      throw new UnsupportedMediaTypeError('form body must be application/x-www-form-urlencoded');
    }
    await parse(ctx as never, async () => {
      // As in an API body: no NUL (the store cannot hold one) and no lone surrogate, named by field.
      refuseUnstorableValues((ctx.request as { body?: unknown }).body ?? {}, []);
      await next();
    });
  };
}

/**
 * The parsed form; repeated fields keep their last value. Line breaks are LF: a browser sends a textarea's as CRLF
 * but counts each as one character against its `maxlength`, as the limits here do.
 */
export function formOf(ctx: Context): Record<string, string> {
  const body = ((ctx.request as { body?: unknown }).body ?? {}) as Record<string, unknown>;
  const form: Record<string, string> = {};
  for (const [key, value] of Object.entries(body)) {
    const last: unknown = Array.isArray(value) ? value[value.length - 1] : value;
    if (typeof last === 'string') form[key] = last.replace(/\r\n?/g, '\n');
  }
  return form;
}

/** A redirect target taken from input: only a path under `prefix`, never another origin (`//host`, `/\\host`). */
export function safeNext(value: unknown, prefix: string, fallback: string): string {
  if (typeof value !== 'string' || value.length > 2000) return fallback;
  if (!value.startsWith(`${prefix}/`) && value !== prefix) return fallback;
  if (/[\\\r\n]/.test(value) || value.startsWith('//')) return fallback;
  return value;
}
