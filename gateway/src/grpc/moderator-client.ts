import * as grpc from '@grpc/grpc-js';
import { loadModerationPackage, type ModerationServiceClient } from '@vigil/proto';
import {
  AppError,
  ConflictError,
  ForbiddenError,
  InternalError,
  NotFoundError,
  TimeoutError,
  UnavailableError,
  ValidationError,
  type Issue,
} from '../http/errors';

/** Trailer keys the moderator sets on a failure: its stable error code and JSON details. */
const ERROR_DETAILS_KEY = 'vigil-error-details';

/** What FAILED_PRECONDITION means for a call: a protected subject (403) or a state conflict (409). */
export type PreconditionMeaning = 'forbidden' | 'conflict';

function detailsOf(err: grpc.ServiceError): unknown {
  const raw = err.metadata?.get(ERROR_DETAILS_KEY)[0];
  if (typeof raw !== 'string') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

/** The edge translation from a gRPC status to the HTTP error family. */
export function fromGrpcError(err: grpc.ServiceError, precondition: PreconditionMeaning = 'conflict'): AppError {
  const message = err.details || 'moderator error';
  const details = detailsOf(err);
  switch (err.code) {
    case grpc.status.INVALID_ARGUMENT: {
      const issues: Issue[] = Array.isArray((details as { issues?: unknown } | undefined)?.issues)
        ? (details as { issues: Issue[] }).issues
        : [{ path: [], message }];
      return new ValidationError(message, issues);
    }
    case grpc.status.NOT_FOUND:
      return new NotFoundError(message, details);
    case grpc.status.ALREADY_EXISTS:
    case grpc.status.ABORTED:
      return new ConflictError(message, details);
    case grpc.status.FAILED_PRECONDITION:
      return precondition === 'forbidden' ? new ForbiddenError(message, details) : new ConflictError(message, details);
    case grpc.status.PERMISSION_DENIED:
      // The moderator does not know the tenant this API key belongs to (e.g. removed from the tenants collection).
      return new ForbiddenError(message, details);
    case grpc.status.UNAUTHENTICATED:
      // The moderator refused the gateway's token: a deployment fault (MODERATOR_GRPC_TOKEN differs), not the client's.
      return new UnavailableError('the moderator is unavailable, try again', undefined, { cause: err });
    case grpc.status.DEADLINE_EXCEEDED:
      return new TimeoutError('the moderator did not answer in time', undefined, { cause: err });
    case grpc.status.UNAVAILABLE:
    case grpc.status.RESOURCE_EXHAUSTED:
    case grpc.status.CANCELLED:
      return new UnavailableError('the moderator is unavailable, try again', undefined, { cause: err });
    default:
      return new InternalError('internal error', undefined, { cause: err });
  }
}

/**
 * A client interceptor adding `authorization: Bearer <token>` to every call. grpc-js refuses call credentials on an
 * insecure channel (in-cluster traffic is plain HTTP/2), so the token travels as call metadata set here.
 */
export function bearerTokenInterceptor(token: string): grpc.Interceptor {
  const value = `Bearer ${token}`;
  return (options, nextCall) =>
    new grpc.InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set('authorization', value);
        next(metadata, listener);
      },
    });
}

/** The moderator's gRPC client, sending the shared token on every call. */
export function createModerationClient(address: string, token: string): ModerationServiceClient {
  const { ModerationService } = loadModerationPackage().vigil.moderation.v1;
  return new ModerationService(address, grpc.credentials.createInsecure(), {
    interceptors: [bearerTokenInterceptor(token)],
  });
}

type Unary<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<Res>,
) => grpc.ClientUnaryCall;

type Req<K extends Methods> = Parameters<ModerationServiceClient[K]>[0];
// `Parameters` of an overloaded method is its last overload: `(argument, callback)`.
type Res<K extends Methods> =
  Parameters<ModerationServiceClient[K]> extends [unknown, grpc.requestCallback<infer R>] ? R : never;
/** The response type of a moderator method. */
export type RpcResponse<K extends Methods> = Res<K>;
export type RpcRequest<K extends Methods> = Req<K>;
export type Methods =
  | 'moderate'
  | 'getRecord'
  | 'listRecords'
  | 'getRecordEvents'
  | 'getUser'
  | 'getUserEvents'
  | 'listUsers'
  | 'moderateRecordManually'
  | 'setUserStatus'
  | 'createAppeal'
  | 'listAppeals'
  | 'decideAppeal';

/** Every call carries a deadline; failures come back as AppErrors. */
export class ModeratorClient {
  constructor(
    readonly client: ModerationServiceClient,
    private readonly timeouts: { moderateMs: number; defaultMs: number },
  ) {}

  call<K extends Methods>(
    method: K,
    request: Req<K>,
    options: { requestId?: string; precondition?: PreconditionMeaning } = {},
  ): Promise<Res<K>> {
    const fn = this.client[method] as unknown as Unary<Req<K>, Res<K>>;
    const timeoutMs = method === 'moderate' ? this.timeouts.moderateMs : this.timeouts.defaultMs;
    const metadata = new grpc.Metadata();
    if (options.requestId) metadata.set('x-request-id', options.requestId);
    return new Promise((resolve, reject) => {
      fn.call(this.client, request, metadata, { deadline: Date.now() + timeoutMs }, (err, response) => {
        if (err) reject(fromGrpcError(err, options.precondition));
        else resolve(response as Res<K>);
      });
    });
  }
}
