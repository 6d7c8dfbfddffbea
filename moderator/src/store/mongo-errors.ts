import { isStoreUnavailable } from '@vigil/proto/platform';
import { AppError, UnavailableError } from '../domain/errors';

/**
 * A store failure that means the database is not reachable right now (`isStoreUnavailable`: a broken connection, a
 * client-side driver error, a server that cannot serve now) is UnavailableError, so callers retry instead of failing
 * the work for good. Any other error is returned as it is.
 */
export function toAppError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (isStoreUnavailable(err)) return new UnavailableError('database unavailable', undefined, { cause: err });
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
