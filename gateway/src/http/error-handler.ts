import type { Context, Next } from 'koa';
import { isStoreUnavailable } from '@vigil/proto/platform';
import type { Logger } from 'pino';
import { requestIdOf } from './request-id';
import {
  AppError,
  InternalError,
  InvalidJsonError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  UnavailableError,
  UnsupportedMediaTypeError,
  type ErrorCode,
} from '../errors';

/** The HTTP status of each error code: the one place the error family meets HTTP (docs/api.md lists them all). */
export const STATUS: Readonly<Record<ErrorCode, number>> = {
  validation_error: 400,
  invalid_json: 400,
  prompt_rules_disabled: 400,
  payments_not_configured: 400,
  secrets_not_configured: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  report_not_decided: 409,
  report_actioned: 409,
  complaint_exists: 409,
  complaint_window_closed: 409,
  limit_exceeded: 409,
  backtest_running: 409,
  backtest_not_finished: 409,
  version_not_live: 409,
  retroaction_running: 409,
  backtest_expired: 410,
  unknown_rule_version: 422,
  invalid_rule_set: 422,
  backtest_too_large: 422,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  timeout: 504,
};

export const statusOf = (err: AppError): number => STATUS[err.code];

/** Errors raised by the body parser (raw-body / co-body) carry a `type` and a `status`. */
function fromParserError(err: unknown): AppError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { type, status } = err as { type?: unknown; status?: unknown };
  if (type === 'entity.too.large' || status === 413) return new PayloadTooLargeError('request body is too large');
  // co-body marks a JSON syntax error with status 400 (and no type).
  if (type === 'entity.parse.failed' || (err instanceof SyntaxError && status === 400))
    return new InvalidJsonError('request body is not valid JSON');
  if (type === 'encoding.unsupported' || status === 415) {
    return new UnsupportedMediaTypeError('unsupported content encoding');
  }
  if (type === 'request.aborted' || type === 'request.size.invalid') {
    return new InvalidJsonError('request body could not be read');
  }
  if (isZlibError(err)) return new InvalidJsonError('request body could not be decompressed');
  return undefined;
}

/**
 * A body whose Content-Encoding (gzip, deflate, br) does not match its bytes fails in zlib, which raw-body passes on
 * as is: zlib codes start with Z_, brotli's with ERR__ERROR_. koa-body turns a thrown value that is not an `Error` of
 * its realm (so a zlib error under a test runner's vm) into an Error named 'object' whose message is its JSON.
 */
function isZlibError(err: object): boolean {
  let { code, errno } = err as { code?: unknown; errno?: unknown };
  const { name, message } = err as { name?: unknown; message?: unknown };
  if (errno === undefined && name === 'object' && typeof message === 'string') {
    try {
      ({ code, errno } = JSON.parse(message) as { code?: unknown; errno?: unknown });
    } catch {
      return false;
    }
  }
  return typeof errno === 'number' && typeof code === 'string' && /^(Z_|ERR__ERROR_)/.test(code);
}

/** Any failure as the AppError it stands for, with its HTTP status and the response headers it asks for. */
export function toHttpError(raw: unknown): { err: AppError; status: number; headers?: Record<string, string> } {
  const err = toAppError(raw);
  return { err, status: statusOf(err), headers: err instanceof RateLimitedError ? err.headers : undefined };
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  // The database being out of reach is a dependency outage the client can retry, not a bug (`isStoreUnavailable`).
  if (isStoreUnavailable(err)) {
    return new UnavailableError('the database is unavailable, try again', undefined, { cause: err });
  }
  return fromParserError(err) ?? new InternalError('internal error', undefined, { cause: err });
}

/**
 * Outermost middleware: every failure leaves as the JSON envelope with the request id; an unmatched route is a 404 in
 * the same shape. Only `internal` is logged as an error: the other codes are the client's doing.
 */
export function errorHandler(log: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new NotFoundError('no such route');
    } catch (raw) {
      const { err, status, headers } = toHttpError(raw);
      if (status >= 500 && !err.retriable) {
        log.error({ err: err.cause ?? err, requestId: requestIdOf(ctx), route: ctx._matchedRoute }, 'request failed');
      } else if (status >= 500) {
        log.warn({ err: err.cause ?? err, code: err.code, requestId: requestIdOf(ctx) }, 'dependency failed');
      }
      ctx.status = status;
      if (headers) ctx.set(headers);
      const body: Record<string, unknown> = { code: err.code, message: err.message };
      if (err.details !== undefined) body.details = err.details;
      body.requestId = requestIdOf(ctx);
      ctx.body = { error: body };
    }
  };
}
