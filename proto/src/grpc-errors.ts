import * as grpc from '@grpc/grpc-js';

/**
 * How a failed ModerationService call says what went wrong: a gRPC status for generic clients, and in the trailers a
 * stable application code (and JSON details) that the gateway maps to its HTTP errors. The moderator sets them from
 * here (`grpcErrorTrailers`), the gateway reads them from here (`grpcErrorOf`).
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

const isGrpcErrorCode = (value: unknown): value is GrpcErrorCode =>
  typeof value === 'string' && Object.hasOwn(GRPC_ERROR_STATUS, value);

/**
 * The code of a status that came without one in its trailers: raised by gRPC itself (a deadline, a lost connection, a
 * message over a limit) or by a server that is not the moderator.
 */
function codeOfStatus(status: grpc.status): GrpcErrorCode {
  switch (status) {
    case grpc.status.INVALID_ARGUMENT:
      return 'validation_error';
    case grpc.status.NOT_FOUND:
      return 'not_found';
    case grpc.status.ALREADY_EXISTS:
    case grpc.status.ABORTED:
      return 'conflict';
    case grpc.status.FAILED_PRECONDITION:
      return 'failed_precondition';
    case grpc.status.PERMISSION_DENIED:
      return 'unknown_tenant';
    case grpc.status.UNAUTHENTICATED:
      return 'unauthenticated';
    case grpc.status.UNAVAILABLE:
    case grpc.status.RESOURCE_EXHAUSTED:
    case grpc.status.CANCELLED:
      return 'unavailable';
    case grpc.status.DEADLINE_EXCEEDED:
      return 'deadline_exceeded';
    default:
      return 'internal';
  }
}

/** The trailers of a failed call: its code, and its details as JSON when there are any. */
export function grpcErrorTrailers(code: GrpcErrorCode, details?: Record<string, unknown>): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set(GRPC_ERROR_TRAILERS.code, code);
  if (details) metadata.set(GRPC_ERROR_TRAILERS.details, JSON.stringify(details));
  return metadata;
}

/** The code and details of a failed call: from its trailers, or from its status when the trailers have no code. */
export function grpcErrorOf(err: grpc.ServiceError): { code: GrpcErrorCode; details: unknown } {
  const code = err.metadata?.get(GRPC_ERROR_TRAILERS.code)[0];
  const raw = err.metadata?.get(GRPC_ERROR_TRAILERS.details)[0];
  let details: unknown;
  if (typeof raw === 'string') {
    try {
      details = JSON.parse(raw) as unknown;
    } catch {
      details = undefined;
    }
  }
  return { code: isGrpcErrorCode(code) ? code : codeOfStatus(err.code), details };
}
