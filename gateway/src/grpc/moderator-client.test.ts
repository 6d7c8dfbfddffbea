import * as grpc from '@grpc/grpc-js';
import { fromGrpcError } from './moderator-client';

function serviceError(
  code: grpc.status,
  details = 'message',
  trailers: Record<string, string> = {},
): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(trailers)) metadata.set(key, value);
  return Object.assign(new Error(details), { code, details, metadata });
}

describe('gRPC status to HTTP error', () => {
  const table: Array<[string, grpc.status, 'forbidden' | 'conflict' | undefined, number, string]> = [
    ['INVALID_ARGUMENT', grpc.status.INVALID_ARGUMENT, undefined, 400, 'validation_error'],
    ['NOT_FOUND', grpc.status.NOT_FOUND, undefined, 404, 'not_found'],
    ['ALREADY_EXISTS', grpc.status.ALREADY_EXISTS, undefined, 409, 'conflict'],
    ['ABORTED', grpc.status.ABORTED, undefined, 409, 'conflict'],
    ['FAILED_PRECONDITION (state)', grpc.status.FAILED_PRECONDITION, 'conflict', 409, 'conflict'],
    ['FAILED_PRECONDITION (protected)', grpc.status.FAILED_PRECONDITION, 'forbidden', 403, 'forbidden'],
    ['UNAVAILABLE', grpc.status.UNAVAILABLE, undefined, 503, 'unavailable'],
    ['PERMISSION_DENIED (unknown tenant)', grpc.status.PERMISSION_DENIED, undefined, 403, 'forbidden'],
    ['UNAUTHENTICATED (the gateway token refused)', grpc.status.UNAUTHENTICATED, undefined, 503, 'unavailable'],
    ['DEADLINE_EXCEEDED', grpc.status.DEADLINE_EXCEEDED, undefined, 504, 'timeout'],
    ['INTERNAL', grpc.status.INTERNAL, undefined, 500, 'internal'],
    ['UNKNOWN', grpc.status.UNKNOWN, undefined, 500, 'internal'],
  ];
  it.each(table)('%s → %s', (_name, code, precondition, status, errorCode) => {
    const err = fromGrpcError(serviceError(code), precondition);
    expect([err.status, err.code]).toEqual([status, errorCode]);
  });

  it('keeps the moderator message and JSON details for client errors', () => {
    const err = fromGrpcError(
      serviceError(grpc.status.FAILED_PRECONDITION, 'record is protected', {
        'vigil-error-details': '{"recordId":"rec_1"}',
      }),
      'forbidden',
    );
    expect(err.message).toBe('record is protected');
    expect(err.details).toEqual({ recordId: 'rec_1' });
  });

  it('does not pass the message of an internal failure to the client', () => {
    expect(fromGrpcError(serviceError(grpc.status.INTERNAL, 'stack trace here')).message).toBe('internal error');
  });
});
