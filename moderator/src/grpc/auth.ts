import { createHash, timingSafeEqual } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { GRPC_ERROR_STATUS, grpcErrorTrailers } from '@vigil/proto';

/**
 * Health checks stay open: they tell only whether the server is serving, and probes (kubelet gRPC probes,
 * grpc_health_probe) cannot send a token.
 */
const OPEN_SERVICE_PREFIX = '/grpc.health.v1.Health/';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * A server interceptor requiring `authorization: Bearer <token>` on every call except health checks; anything else
 * ends with UNAUTHENTICATED before the handler runs. The comparison runs over SHA-256 digests, so it takes the same
 * time whatever the length or content of the presented value. Nothing here logs the presented value.
 */
export function bearerTokenInterceptor(token: string): grpc.ServerInterceptor {
  const expected = digest(token);
  const authorised = (metadata: grpc.Metadata): boolean => {
    const values = metadata.get('authorization');
    const [value] = values;
    if (values.length !== 1 || typeof value !== 'string' || !value.startsWith('Bearer ')) return false;
    return timingSafeEqual(digest(value.slice('Bearer '.length)), expected);
  };

  return (method, call) => {
    if (method.path.startsWith(OPEN_SERVICE_PREFIX)) return new grpc.ServerInterceptingCall(call);
    const listener = new grpc.ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        if (authorised(metadata)) {
          next(metadata);
          return;
        }
        call.sendStatus({
          code: GRPC_ERROR_STATUS.unauthenticated,
          details: 'missing or invalid credentials',
          metadata: grpcErrorTrailers('unauthenticated'),
        });
      })
      .build();
    return new grpc.ServerInterceptingCall(
      call,
      new grpc.ResponderBuilder().withStart((next) => next(listener)).build(),
    );
  };
}
