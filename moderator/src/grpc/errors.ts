import type * as grpc from '@grpc/grpc-js';
import { GRPC_ERROR_STATUS, grpcErrorTrailers } from '@vigil/proto';
import type { Logger } from 'pino';
import { AppError } from '../domain/errors';
import { toAppError } from '../store/mongo-errors';

/**
 * The only place an error becomes a gRPC status, with the code and details in the trailers (`@vigil/proto`'s
 * grpc-errors). AppErrors keep their message (written for clients, never content); anything else is logged and
 * answered as INTERNAL without its message.
 */
export function toServiceError(thrown: unknown, log: Logger, method: string): Partial<grpc.StatusObject> {
  // A store error that escaped its store module's translation still means the store, not a bug.
  const err = toAppError(thrown);
  if (err instanceof AppError) {
    if (err.code === 'unavailable') log.warn({ err: err.cause ?? err, method }, 'dependency unavailable');
    return {
      code: GRPC_ERROR_STATUS[err.code],
      details: err.message,
      metadata: grpcErrorTrailers(err.code, err.details),
    };
  }
  log.error({ err, method }, 'unexpected error');
  return { code: GRPC_ERROR_STATUS.internal, details: 'internal error', metadata: grpcErrorTrailers('internal') };
}
