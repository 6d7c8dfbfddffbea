import { isStoreUnavailable } from '@vigil/proto/platform';
import { MongoError } from 'mongodb';
import { AppError, StoreFailedError, UnavailableError } from '../errors';

/**
 * A store failure in the notifier's error family: MongoDB out of reach (`isStoreUnavailable`: a broken connection, a
 * client-side driver error, a server that cannot serve now) is `UnavailableError`, any other refusal by the server
 * `StoreFailedError`; what is neither is returned as it is. Knowing the driver's classes stays here, with the stores.
 */
export function fromStore(err: unknown): unknown {
  if (isStoreUnavailable(err)) return new UnavailableError('store unavailable', { cause: err });
  if (err instanceof MongoError) return new StoreFailedError('store refused the operation', { cause: err });
  return err;
}

/**
 * Failed tries of a write of several items (a batch of events, a group of deliveries) after which its items are
 * written one at a time, so that one failing for a reason of its own (not `isRetriable`) is set aside alone.
 */
export const ISOLATE_AFTER_ATTEMPTS = 5;

/**
 * A failure that would hit every message alike (the store out of reach): work waits for it. Any other failure (the
 * store refused this write, a bug) is the work's own, so it is set aside instead of holding the work behind it.
 */
export function isRetriable(err: unknown): boolean {
  // A store failure may come wrapped (its `cause`): out of reach anywhere in the chain is out of reach.
  for (let cause: unknown = err, depth = 0; cause instanceof Error && depth < 5; depth += 1) {
    const failure = fromStore(cause);
    if (failure instanceof AppError && failure.retriable) return true;
    cause = cause.cause;
  }
  return false;
}
