import * as grpc from '@grpc/grpc-js';
import {
  CONFIG_VERSION_METADATA,
  grpcErrorOf,
  loadModerationPackage,
  type GrpcErrorCode,
  type ModerationServiceClient,
  type TenantVersions,
} from '@vigil/proto';
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
} from '../errors';

const moderatorUnavailable = (err: grpc.ServiceError) =>
  new UnavailableError('the moderator is unavailable, try again', undefined, { cause: err });

/**
 * The HTTP error of each moderator error code (`@vigil/proto`'s grpc-errors): the one place a failed call becomes a
 * status and an envelope. Client errors keep the moderator's message and details; the others say nothing of it.
 */
const HTTP_ERROR_OF: Record<GrpcErrorCode, (message: string, details: unknown, err: grpc.ServiceError) => AppError> = {
  validation_error: (message, details) => {
    const issues = (details as { issues?: unknown } | undefined)?.issues;
    return new ValidationError(message, Array.isArray(issues) ? (issues as Issue[]) : [{ path: [], message }]);
  },
  not_found: (message, details) => new NotFoundError(message, details),
  conflict: (message, details) => new ConflictError(message, details),
  failed_precondition: (message, details) => new ConflictError(message, details),
  // A protected record or user is refused, not conflicting: 403 as in Iffy.
  protected: (message, details) => new ForbiddenError(message, details),
  // The moderator does not know the tenant this API key belongs to (e.g. removed from the tenants collection).
  unknown_tenant: (message, details) => new ForbiddenError(message, details),
  // The moderator refused the gateway's token: a deployment fault (MODERATOR_GRPC_TOKEN differs), not the client's.
  unauthenticated: (_message, _details, err) => moderatorUnavailable(err),
  unavailable: (_message, _details, err) => moderatorUnavailable(err),
  deadline_exceeded: (_message, _details, err) =>
    new TimeoutError('the moderator did not answer in time', undefined, { cause: err }),
  internal: (_message, _details, err) => new InternalError('internal error', undefined, { cause: err }),
};

/** The edge translation from a failed moderator call to the HTTP error family, by the call's error code. */
export function fromGrpcError(err: grpc.ServiceError): AppError {
  const { code, details } = grpcErrorOf(err);
  return HTTP_ERROR_OF[code](err.details || 'moderator error', details, err);
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
  | 'decideAppeal'
  | 'createReport'
  | 'getReport'
  | 'listReports'
  | 'decideReport';

/**
 * Every call carries a deadline and the tenant's configuration version known here (the moderator judges with rules at
 * least that new); failures come back as AppErrors.
 */
export class ModeratorClient {
  constructor(
    readonly client: ModerationServiceClient,
    private readonly timeouts: { moderateMs: number; defaultMs: number },
    private readonly versions: TenantVersions,
  ) {}

  call<K extends Methods>(method: K, request: Req<K>, options: { requestId?: string } = {}): Promise<Res<K>> {
    const fn = this.client[method] as unknown as Unary<Req<K>, Res<K>>;
    const timeoutMs = method === 'moderate' ? this.timeouts.moderateMs : this.timeouts.defaultMs;
    const metadata = new grpc.Metadata();
    if (options.requestId) metadata.set('x-request-id', options.requestId);
    const { tenantId } = request;
    const version = tenantId ? this.versions.of(tenantId) : 0;
    if (version > 0) metadata.set(CONFIG_VERSION_METADATA, String(version));
    return new Promise((resolve, reject) => {
      fn.call(this.client, request, metadata, { deadline: Date.now() + timeoutMs }, (err, response) => {
        if (err) reject(fromGrpcError(err));
        else resolve(response as Res<K>);
      });
    });
  }
}
