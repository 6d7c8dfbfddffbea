import { isUnavailableServerError } from '@vigil/proto';
import { MongoError, MongoServerError } from 'mongodb';
import { StoreFailedError, UnavailableError } from '../errors';

/**
 * A store failure in the notifier's error family: MongoDB out of reach (network, server selection, a write the driver
 * labels retryable) is `UnavailableError`, any other refusal by the server `StoreFailedError`; what is not a driver
 * error is returned as it is. Knowing the driver's classes stays here, with the stores.
 */
export function fromStore(err: unknown): unknown {
  if (!(err instanceof MongoError)) return err;
  if (!(err instanceof MongoServerError) || isUnavailableServerError(err)) {
    return new UnavailableError('store unavailable', { cause: err });
  }
  return new StoreFailedError('store refused the operation', { cause: err });
}
