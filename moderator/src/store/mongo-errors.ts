import { isUnavailableServerError } from '@vigil/proto';
import { MongoError, MongoServerError } from 'mongodb';
import { AppError, UnavailableError } from '../domain/errors';

/** Node's codes for a connection that broke or could not be made. */
const NETWORK_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ETIMEDOUT', 'ENOTCONN', 'ECONNABORTED']);

/**
 * Client-side driver errors (network, server selection, pool cleared) and server errors that say the store cannot serve
 * now (labelled retryable, or FerretDB's backend out of reach: `isUnavailableServerError`) mean the database is not
 * reachable right now: UnavailableError, so callers retry instead of failing the work for good.
 */
export function toAppError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  // A socket error that reached here unwrapped (the driver wraps most in MongoNetworkError): the store's connection
  // broke mid-command.
  if (err instanceof Error && NETWORK_CODES.has((err as { code?: unknown }).code as string)) {
    return new UnavailableError('database unavailable', undefined, { cause: err });
  }
  if (err instanceof MongoError) {
    const serverSide = err instanceof MongoServerError;
    if (!serverSide || isUnavailableServerError(err)) {
      return new UnavailableError('database unavailable', undefined, { cause: err });
    }
  }
  return err;
}

/** Runs a store operation and translates driver errors at this boundary. */
export async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw toAppError(err);
  }
}
