import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { AppError } from '../domain/errors';

const STATUS_BY_CODE: Readonly<Record<string, grpc.status>> = {
  validation_error: grpc.status.INVALID_ARGUMENT,
  not_found: grpc.status.NOT_FOUND,
  conflict: grpc.status.ABORTED,
  failed_precondition: grpc.status.FAILED_PRECONDITION,
  unknown_tenant: grpc.status.PERMISSION_DENIED,
  unavailable: grpc.status.UNAVAILABLE,
};

/** Trailer keys the gateway reads to build its error body: the stable code and the JSON details. */
export const ERROR_CODE_KEY = 'vigil-error-code';
export const ERROR_DETAILS_KEY = 'vigil-error-details';

/**
 * The only place an error becomes a gRPC status. AppErrors keep their message (written for clients, never content);
 * anything else is logged and answered as INTERNAL without its message.
 */
export function toServiceError(err: unknown, log: Logger, method: string): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  if (err instanceof AppError) {
    metadata.set(ERROR_CODE_KEY, err.code);
    if (err.details) metadata.set(ERROR_DETAILS_KEY, JSON.stringify(err.details));
    if (err.code === 'unavailable') log.warn({ err: err.cause ?? err, method }, 'dependency unavailable');
    return { code: STATUS_BY_CODE[err.code] ?? grpc.status.UNKNOWN, details: err.message, metadata };
  }
  log.error({ err, method }, 'unexpected error');
  metadata.set(ERROR_CODE_KEY, 'internal');
  return { code: grpc.status.INTERNAL, details: 'internal error', metadata };
}
