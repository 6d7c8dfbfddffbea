// Reading a failed call of the moderator: the code and details its trailers carry (written with @vigil/proto's
// grpcErrorTrailers), or a code from its status when they carry none.
import * as grpc from '@grpc/grpc-js';
import { GRPC_ERROR_STATUS, GRPC_ERROR_TRAILERS, type GrpcErrorCode } from '@vigil/proto';

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
