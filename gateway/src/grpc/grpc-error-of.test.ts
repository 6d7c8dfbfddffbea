import * as grpc from '@grpc/grpc-js';
import { GRPC_ERROR_STATUS, grpcErrorTrailers, type GrpcErrorCode } from '@vigil/proto';
import { grpcErrorOf } from './grpc-error-of';

function serviceError(code: grpc.status, metadata = new grpc.Metadata()): grpc.ServiceError {
  return Object.assign(new Error('message'), { code, details: 'message', metadata });
}

describe('gRPC error codes', () => {
  it.each(Object.entries(GRPC_ERROR_STATUS) as Array<[GrpcErrorCode, grpc.status]>)(
    'reads %s back from the trailers it is sent with',
    (code, status) => {
      const err = serviceError(status, grpcErrorTrailers(code, { recordId: 'rec_1' }));
      expect(grpcErrorOf(err)).toEqual({ code, details: { recordId: 'rec_1' } });
    },
  );

  it.each<[string, grpc.status, GrpcErrorCode]>([
    ['INVALID_ARGUMENT', grpc.status.INVALID_ARGUMENT, 'validation_error'],
    ['NOT_FOUND', grpc.status.NOT_FOUND, 'not_found'],
    ['ALREADY_EXISTS', grpc.status.ALREADY_EXISTS, 'conflict'],
    ['ABORTED', grpc.status.ABORTED, 'conflict'],
    ['FAILED_PRECONDITION', grpc.status.FAILED_PRECONDITION, 'failed_precondition'],
    ['PERMISSION_DENIED', grpc.status.PERMISSION_DENIED, 'unknown_tenant'],
    ['UNAUTHENTICATED', grpc.status.UNAUTHENTICATED, 'unauthenticated'],
    ['UNAVAILABLE', grpc.status.UNAVAILABLE, 'unavailable'],
    ['RESOURCE_EXHAUSTED', grpc.status.RESOURCE_EXHAUSTED, 'unavailable'],
    ['CANCELLED', grpc.status.CANCELLED, 'unavailable'],
    ['DEADLINE_EXCEEDED', grpc.status.DEADLINE_EXCEEDED, 'deadline_exceeded'],
    ['INTERNAL', grpc.status.INTERNAL, 'internal'],
    ['UNKNOWN', grpc.status.UNKNOWN, 'internal'],
  ])('takes the code of a bare %s from its status', (_name, status, code) => {
    expect(grpcErrorOf(serviceError(status))).toEqual({ code, details: undefined });
  });

  it('takes the code from the status when the trailer holds an unknown code or the details are not JSON', () => {
    const metadata = new grpc.Metadata();
    metadata.set('vigil-error-code', 'no_such_code');
    metadata.set('vigil-error-details', '{not json');
    expect(grpcErrorOf(serviceError(grpc.status.NOT_FOUND, metadata))).toEqual({
      code: 'not_found',
      details: undefined,
    });
  });
});
