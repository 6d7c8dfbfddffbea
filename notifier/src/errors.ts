/** Every error code of the notifier's own errors. */
export type ErrorCode = 'unavailable' | 'store_failed';

/**
 * The notifier's one error family. Code throws (or translates to) these by meaning; only the edges decide what they
 * mean there: the Kafka consumer retries a batch on a `retriable` error and sets a message aside otherwise.
 */
export abstract class AppError extends Error {
  abstract readonly code: ErrorCode;
  /** Trying again later may succeed. */
  readonly retriable: boolean = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A dependency (MongoDB) is out of reach: every message would fail alike, so work waits for it. */
export class UnavailableError extends AppError {
  readonly code = 'unavailable';
  override readonly retriable = true;
}

/** The store refused an operation for a reason of the operation's own (a document it will not take). */
export class StoreFailedError extends AppError {
  readonly code = 'store_failed';
}
