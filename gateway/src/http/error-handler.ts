import type { Context, Next } from 'koa';
import { MongoError, MongoServerError } from 'mongodb';
import type { Logger } from 'pino';
import {
  AppError,
  InternalError,
  InvalidJsonError,
  NotFoundError,
  PayloadTooLargeError,
  UnavailableError,
  UnsupportedMediaTypeError,
} from './errors';

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
  return undefined;
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  // The database being out of reach is a dependency outage the client can retry, not a bug: every client-side driver
  // error (network, server selection, pool cleared, topology closed) and server errors the driver labels retryable.
  if (err instanceof MongoError && (!(err instanceof MongoServerError) || err.hasErrorLabel('RetryableWriteError'))) {
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
      const err = toAppError(raw);
      if (err.status >= 500 && !err.retriable) {
        log.error(
          { err: err.cause ?? err, requestId: ctx.state.requestId, route: ctx._matchedRoute },
          'request failed',
        );
      } else if (err.status >= 500) {
        log.warn({ err: err.cause ?? err, code: err.code, requestId: ctx.state.requestId }, 'dependency failed');
      }
      ctx.status = err.status;
      if (err.headers) ctx.set(err.headers);
      const body: Record<string, unknown> = { code: err.code, message: err.message };
      if (err.details !== undefined) body.details = err.details;
      body.requestId = ctx.state.requestId;
      ctx.body = { error: body };
    }
  };
}
