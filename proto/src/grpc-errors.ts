import * as grpc from '@grpc/grpc-js';

/**
 * How a failed ModerationService call says what went wrong: a gRPC status for generic clients, and in the trailers a
 * stable application code (and JSON details) that the gateway maps to its HTTP errors. The moderator sets them from
 * here (`grpcErrorTrailers`), the gateway reads them with `grpcErrorOf` (gateway/src/grpc/grpc-error-of.ts).
 */
export const GRPC_ERROR_TRAILERS = {
  /** The application code, one of `GrpcErrorCode`. */
  code: 'vigil-error-code',
  /** JSON object with the error's details (ids, validation issues); absent when there are none. */
  details: 'vigil-error-details',
} as const;

/** Every application code of a failed call, and the gRPC status it travels with. */
export const GRPC_ERROR_STATUS = {
  /** The request is malformed or breaks a bound. */
  validation_error: grpc.status.INVALID_ARGUMENT,
  not_found: grpc.status.NOT_FOUND,
  /** The change collides with the current state (e.g. a second open appeal, an appeal decided already). */
  conflict: grpc.status.ABORTED,
  /** The subject is not in a state that allows the change (e.g. an appeal of a user who is not suspended). */
  failed_precondition: grpc.status.FAILED_PRECONDITION,
  /** The record or user is protected: nobody may flag, suspend or ban it. */
  protected: grpc.status.FAILED_PRECONDITION,
  /** The call names a tenant the moderator does not know. */
  unknown_tenant: grpc.status.PERMISSION_DENIED,
  /** The caller's token is missing or wrong. */
  unauthenticated: grpc.status.UNAUTHENTICATED,
  /** A dependency (the database) is out of reach: trying again later may succeed. */
  unavailable: grpc.status.UNAVAILABLE,
  /** The call's deadline passed before an answer: set by gRPC at the caller, never by the moderator. */
  deadline_exceeded: grpc.status.DEADLINE_EXCEEDED,
  internal: grpc.status.INTERNAL,
} as const satisfies Record<string, grpc.status>;

export type GrpcErrorCode = keyof typeof GRPC_ERROR_STATUS;

/** The trailers of a failed call: its code, and its details as JSON when there are any. */
export function grpcErrorTrailers(code: GrpcErrorCode, details?: Record<string, unknown>): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set(GRPC_ERROR_TRAILERS.code, code);
  if (details) metadata.set(GRPC_ERROR_TRAILERS.details, JSON.stringify(details));
  return metadata;
}
