import * as grpc from '@grpc/grpc-js';
import {
  CONFIG_CONFIRMED_METADATA,
  CONFIG_VERSION_METADATA,
  GRPC_ERROR_TRAILERS,
  loadModerationPackage,
  type GrpcErrorCode,
  type ModerationServiceClient,
  type TenantVersions,
} from '@vigil/proto';
import { grpcErrorOf } from './grpc-error-of';
import {
  AppError,
  COMPLAINT_REFUSALS,
  ComplaintRefusedError,
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
  // A refused complaint names its reason (see COMPLAINT_REFUSALS): answered with that code, the rest as `conflict`.
  conflict: (message, details) => {
    const reason = (details as { reason?: unknown } | undefined)?.reason;
    const refusal = COMPLAINT_REFUSALS.find((code) => code === reason);
    return refusal ? new ComplaintRefusedError(refusal, message, details) : new ConflictError(message, details);
  },
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
function bearerTokenInterceptor(token: string): grpc.Interceptor {
  const value = `Bearer ${token}`;
  return (options, nextCall) =>
    new grpc.InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set('authorization', value);
        next(metadata, listener);
      },
    });
}

/** Methods that only read: calling one twice changes nothing, so a call that failed UNAVAILABLE may be sent again. */
const READ_METHODS = [
  'GetRecord',
  'ListRecords',
  'GetRecordEvents',
  'GetUser',
  'GetUserEvents',
  'ListUsers',
  'ListAppeals',
  'GetReportEvents',
  'GetHashBank',
  'ListHashBanks',
  'ListBankHashes',
  'GetBankHash',
  'ListHashFeeds',
] as const;

/**
 * The channel's service config. `round_robin` opens a connection to every address the target resolves to and sends
 * each call to the next ready one, skipping those that fail: through a headless Service (`dns:///…`) the calls spread
 * over every moderator pod and a dead pod costs no call, where the default `pick_first` keeps one connection (one
 * pod behind a ClusterIP) until it breaks.
 *
 * Reads are retried on UNAVAILABLE (a moderator that went away mid-call, or one whose store did not answer), twice
 * at most, within the call's deadline. Moderate and the decisions are not retried here: the moderator may have
 * applied the call before the connection dropped. `ModeratorClient` sends a Moderate once more itself when a second
 * cannot apply twice (passthrough, or carrying its moderation id). A decision carries no such id. A call that never
 * reached a moderator is retried by grpc-js in any case (its transparent retry).
 */
const MODERATOR_SERVICE_CONFIG = {
  loadBalancingConfig: [{ round_robin: {} }],
  methodConfig: [
    {
      name: READ_METHODS.map((method) => ({ service: 'vigil.moderation.v1.ModerationService', method })),
      retryPolicy: {
        maxAttempts: 3,
        initialBackoff: '0.05s',
        maxBackoff: '0.5s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
};

/**
 * The moderator's gRPC client, sending the shared token on every call. `target` is a gRPC target: `host:port` or
 * `dns:///host:port`, resolved by DNS either way; every address it resolves to is used (MODERATOR_SERVICE_CONFIG).
 */
export function createModerationClient(target: string, token: string): ModerationServiceClient {
  const { ModerationService } = loadModerationPackage().vigil.moderation.v1;
  return new ModerationService(target, grpc.credentials.createInsecure(), {
    interceptors: [bearerTokenInterceptor(token)],
    'grpc.service_config': JSON.stringify(MODERATOR_SERVICE_CONFIG),
    // grpc-js resolves the name again when a connection breaks, at most this often: a replaced pod's new address is
    // found within it rather than grpc-js' 30 s.
    'grpc.dns_min_time_between_resolutions_ms': 5000,
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
  | 'decideReport'
  | 'getReportEvents'
  | 'fileReportComplaint'
  | 'decideReportComplaint'
  | 'createHashBank'
  | 'getHashBank'
  | 'listHashBanks'
  | 'updateHashBank'
  | 'deleteHashBank'
  | 'addBankHashes'
  | 'listBankHashes'
  | 'getBankHash'
  | 'updateBankHash'
  | 'withdrawBankHash'
  | 'lookupHashes'
  | 'listHashQuarantines'
  | 'releaseHashQuarantine'
  | 'dismissHashQuarantine'
  | 'createHashFeed'
  | 'listHashFeeds'
  | 'updateHashFeed'
  | 'deleteHashFeed'
  | 'runHashFeed';

export interface ModeratorTimeouts {
  moderateMs: number;
  defaultMs: number;
  /**
   * How long a call waits for a connection to a moderator when the channel has none, milliseconds (within the call's
   * deadline). Default 1000.
   */
  connectWaitMs?: number;
}

/**
 * Every call carries a deadline and the tenant's configuration version known here (the moderator judges with rules at
 * least that new); failures come back as AppErrors. A call starts only on a channel with a connection
 * to a moderator: grpc-js fails calls at once while the channel is in TRANSIENT_FAILURE, but while it is CONNECTING
 * (a moderator address that drops packets, a process that accepts and never speaks HTTP/2) it holds them until their
 * deadline, which would answer 504 after MODERATE_TIMEOUT_MS. Waiting at most `connectWaitMs` for a connection, and
 * answering 503 unavailable after it, keeps a moderator outage quick and distinct from a slow moderation.
 */
export class ModeratorClient {
  private readonly connectWaitMs: number;

  constructor(
    readonly client: ModerationServiceClient,
    private readonly timeouts: ModeratorTimeouts,
    private readonly versions: TenantVersions,
  ) {
    this.connectWaitMs = timeouts.connectWaitMs ?? 1000;
  }

  async call<K extends Methods>(method: K, request: Req<K>, options: { requestId?: string } = {}): Promise<Res<K>> {
    const fn = this.client[method] as unknown as Unary<Req<K>, Res<K>>;
    const timeoutMs = method === 'moderate' ? this.timeouts.moderateMs : this.timeouts.defaultMs;
    const deadline = Date.now() + timeoutMs;
    if (!(await this.connected(Math.min(deadline, Date.now() + this.connectWaitMs)))) {
      throw new UnavailableError('the moderator is unavailable, try again');
    }
    const metadata = new grpc.Metadata();
    if (options.requestId) metadata.set('x-request-id', options.requestId);
    const { tenantId } = request;
    const version = tenantId ? this.versions.of(tenantId) : 0;
    const confirmed = tenantId ? this.versions.isConfirmed(tenantId) : false;
    if (version > 0 || confirmed) metadata.set(CONFIG_VERSION_METADATA, String(version));
    if (confirmed) metadata.set(CONFIG_CONFIRMED_METADATA, '1');
    const attempt = () =>
      new Promise<Res<K>>((resolve, reject) => {
        fn.call(this.client, request, metadata, { deadline }, (err, response) =>
          err ? reject(err) : resolve(response as Res<K>),
        );
      });
    try {
      return await attempt();
    } catch (err) {
      const failure = err as grpc.ServiceError;
      // A Moderate that a moderator did not finish (it went away mid-call) is sent once more, to the next moderator,
      // within the same deadline, when a second one cannot apply twice: a passthrough one stores nothing, one with a
      // moderation id is applied once (the moderator answers the stored result).
      if (!(isRepeatableModerate(method, request) && droppedByTransport(failure))) throw fromGrpcError(failure);
      try {
        return await attempt();
      } catch (again) {
        throw fromGrpcError(again as grpc.ServiceError);
      }
    }
  }

  /**
   * Whether the channel has a connection to a moderator (READY), waiting for one until `until` while it connects;
   * false at once in TRANSIENT_FAILURE (every address failed its last attempt) or SHUTDOWN.
   */
  private connected(until: number): Promise<boolean> | boolean {
    const channel = this.client.getChannel();
    const first = channel.getConnectivityState(true);
    if (first === grpc.connectivityState.READY) return true;
    return new Promise((resolve) => {
      const check = (state: grpc.connectivityState) => {
        if (state === grpc.connectivityState.READY) return resolve(true);
        if (
          state === grpc.connectivityState.TRANSIENT_FAILURE ||
          state === grpc.connectivityState.SHUTDOWN ||
          Date.now() >= until
        ) {
          return resolve(false);
        }
        channel.watchConnectivityState(state, until, (err?: Error) =>
          err ? resolve(false) : check(channel.getConnectivityState(true)),
        );
      };
      check(first);
    });
  }
}

function isRepeatableModerate(method: Methods, request: unknown): boolean {
  const moderate = request as { passthrough?: boolean; moderationId?: string };
  return method === 'moderate' && (moderate.passthrough === true || Boolean(moderate.moderationId));
}

/** UNAVAILABLE raised by gRPC itself (a connection lost), not a moderator's answer (those carry a code in trailers). */
function droppedByTransport(err: grpc.ServiceError): boolean {
  return err.code === grpc.status.UNAVAILABLE && (err.metadata?.get(GRPC_ERROR_TRAILERS.code) ?? []).length === 0;
}
