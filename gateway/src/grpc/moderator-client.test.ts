import * as grpc from '@grpc/grpc-js';
import { GRPC_ERROR_STATUS, grpcErrorTrailers, type GrpcErrorCode } from '@vigil/proto';
import { statusOf } from '../http/error-handler';
import { fromGrpcError } from './moderator-client';

function serviceError(code: grpc.status, details = 'message', metadata = new grpc.Metadata()): grpc.ServiceError {
  return Object.assign(new Error(details), { code, details, metadata });
}

/** A failure as the moderator sends it: the status of its code, and the code in the trailers. */
const moderatorError = (code: GrpcErrorCode, message = 'message', details?: Record<string, unknown>) =>
  serviceError(GRPC_ERROR_STATUS[code], message, grpcErrorTrailers(code, details));

describe('moderator error code to HTTP error', () => {
  it.each<[GrpcErrorCode, number, string]>([
    ['validation_error', 400, 'validation_error'],
    ['not_found', 404, 'not_found'],
    ['conflict', 409, 'conflict'],
    ['failed_precondition', 409, 'conflict'],
    ['protected', 403, 'forbidden'],
    ['unknown_tenant', 403, 'forbidden'],
    ['unauthenticated', 503, 'unavailable'],
    ['unavailable', 503, 'unavailable'],
    ['deadline_exceeded', 504, 'timeout'],
    ['internal', 500, 'internal'],
  ])('%s → %s', (code, status, errorCode) => {
    const err = fromGrpcError(moderatorError(code));
    expect([statusOf(err), err.code]).toEqual([status, errorCode]);
  });

  // Raised by gRPC itself (a deadline, a lost connection, a message over a limit) or a server that is not ours.
  it.each<[string, grpc.status, number, string]>([
    ['INVALID_ARGUMENT', grpc.status.INVALID_ARGUMENT, 400, 'validation_error'],
    ['NOT_FOUND', grpc.status.NOT_FOUND, 404, 'not_found'],
    ['ALREADY_EXISTS', grpc.status.ALREADY_EXISTS, 409, 'conflict'],
    ['ABORTED', grpc.status.ABORTED, 409, 'conflict'],
    ['FAILED_PRECONDITION', grpc.status.FAILED_PRECONDITION, 409, 'conflict'],
    ['PERMISSION_DENIED', grpc.status.PERMISSION_DENIED, 403, 'forbidden'],
    ['UNAUTHENTICATED', grpc.status.UNAUTHENTICATED, 503, 'unavailable'],
    ['UNAVAILABLE', grpc.status.UNAVAILABLE, 503, 'unavailable'],
    ['RESOURCE_EXHAUSTED', grpc.status.RESOURCE_EXHAUSTED, 503, 'unavailable'],
    ['CANCELLED', grpc.status.CANCELLED, 503, 'unavailable'],
    ['DEADLINE_EXCEEDED', grpc.status.DEADLINE_EXCEEDED, 504, 'timeout'],
    ['INTERNAL', grpc.status.INTERNAL, 500, 'internal'],
    ['UNKNOWN', grpc.status.UNKNOWN, 500, 'internal'],
  ])('a bare %s → %s', (_name, code, status, errorCode) => {
    const err = fromGrpcError(serviceError(code));
    expect([statusOf(err), err.code]).toEqual([status, errorCode]);
  });

  it('keeps the moderator message and JSON details for client errors', () => {
    const err = fromGrpcError(moderatorError('protected', 'record is protected', { recordId: 'rec_1' }));
    expect(err.message).toBe('record is protected');
    expect(err.details).toEqual({ recordId: 'rec_1' });
  });

  it('passes the issues of a validation error on', () => {
    const issues = [{ path: ['metadata'], message: 'too many keys' }];
    const err = fromGrpcError(moderatorError('validation_error', 'metadata is invalid', { issues }));
    expect(err.details).toEqual(issues);
  });

  it('does not pass the message of an internal failure to the client', () => {
    expect(fromGrpcError(moderatorError('internal', 'stack trace here')).message).toBe('internal error');
  });
});
