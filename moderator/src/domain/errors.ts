import type { GrpcErrorCode } from '@vigil/proto';

/**
 * The moderator's one error family. Domain and store code throw by meaning; only the edges translate: gRPC status in
 * `grpc/`, retry vs dead letter in `kafka/`.
 */
export abstract class AppError extends Error {
  /** One of the codes a gRPC caller can receive (`@vigil/proto`'s grpc-errors), which also set the status. */
  abstract readonly code: GrpcErrorCode;
  /** Trying the same thing again later may succeed (a dependency was down), so do not give up on it. */
  readonly retriable: boolean = false;

  constructor(
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {
  readonly code = 'validation_error';
}

export class NotFoundError extends AppError {
  readonly code = 'not_found';
}

export class ConflictError extends AppError {
  readonly code = 'conflict';
}

export class FailedPreconditionError extends AppError {
  readonly code = 'failed_precondition';
}

/** The record or user is protected: a change that would flag, suspend or ban it is refused. */
export class ProtectedError extends AppError {
  readonly code = 'protected';
}

export class UnavailableError extends AppError {
  readonly code = 'unavailable';
  override readonly retriable = true;
}

/**
 * The tenant already has as much waiting as it may (Moderate calls for its share, records for an engine thread): try
 * again later. Thrown where the wait is refused (grpc/keyed-limit, engine/off-loop), and an UnavailableError as
 * it is: gRPC callers get `unavailable` (503 at the gateway), ingest retries the command.
 */
export class TenantBusyError extends UnavailableError {
  constructor() {
    super('too many moderations waiting for this tenant', { retriable: true });
  }
}

/** The tenant named by a call or a command does not exist (never created, or removed): nothing is done for it. */
export class UnknownTenantError extends AppError {
  readonly code = 'unknown_tenant';
}
