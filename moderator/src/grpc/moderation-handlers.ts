import type * as grpc from '@grpc/grpc-js';
import { RecordStatus, UserStatus, type ModerationServiceHandlers } from '@vigil/proto';
import type { Logger } from 'pino';
import { ulid } from 'ulid';
import { UnavailableError, ValidationError } from '../domain/errors';
import type { ModerationService } from '../service/moderation-service';
import type { Queries } from '../service/queries';
import type { KnownTenants } from '../store/known-tenants';
import { toServiceError } from './errors';
import { parseMetadataJson, toAppealMessage, toRecordMessage, toStoredEvent, toUserMessage } from './mappers';

export interface HandlerDeps {
  service: ModerationService;
  queries: Queries;
  tenants: KnownTenants;
  log: Logger;
}

function required(value: string | undefined, path: string): string {
  if (!value) throw new ValidationError(`${path} is required`, { path });
  return value;
}

function oneOf<T extends string>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
  value: string,
  path: string,
): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ValidationError(`${path} is not an allowed value`, { path });
  return parsed.data;
}

/**
 * Wraps one async handler: checks that the request names a tenant that exists, then hands the handler the request and
 * that tenant, and resolves the callback with the value, or with a gRPC status from the error mapping.
 */
function unary<Req extends { tenantId?: string }, Res>(
  log: Logger,
  tenants: KnownTenants,
  method: string,
  handle: (request: Req, tenantId: string, signal: AbortSignal) => Promise<Res>,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    // The caller's deadline passed or it cancelled: work still waiting for it (engine checks in a queue) is dropped.
    const gone = new AbortController();
    call.once('cancelled', () =>
      gone.abort(new UnavailableError('the caller gave up (deadline passed or cancelled)', { method })),
    );
    Promise.resolve()
      .then(() => required(call.request.tenantId, 'tenant_id'))
      .then(async (tenantId) => {
        await tenants.assertKnown(tenantId);
        return handle(call.request, tenantId, gone.signal);
      })
      .then(
        (response) => callback(null, response),
        (err: unknown) => callback(toServiceError(err, log, method)),
      );
  };
}

/**
 * Every RPC of ModerationService. Callers hold the shared token (the server's interceptor checked it) and are trusted
 * to name the right tenant, as the gateway does after authenticating an API key; a tenant that does not exist is
 * refused (PERMISSION_DENIED). Requests are still checked for shape, since a malformed call must get INVALID_ARGUMENT,
 * not a crash. Nothing here logs request fields other than ids.
 */
export function createModerationHandlers({ service, queries, tenants, log }: HandlerDeps): ModerationServiceHandlers {
  const correlation = (requestId?: string) => requestId || ulid();

  return {
    Moderate: unary(log, tenants, 'Moderate', async (request, tenantId, signal) => {
      const user = request.user ?? undefined;
      const result = await service.moderate({
        tenantId,
        correlationId: correlation(request.requestId),
        clientId: required(request.clientId, 'client_id'),
        clientUrl: request.clientUrl,
        name: request.name,
        entity: required(request.entity, 'entity'),
        content: {
          text: request.content?.text ?? '',
          imageUrls: request.content?.imageUrls ?? [],
          externalUrls: request.content?.externalUrls ?? [],
        },
        metadata: parseMetadataJson(request.metadataJson, 'metadata'),
        user: user
          ? {
              clientId: required(user.clientId, 'user.client_id'),
              clientUrl: user.clientUrl,
              paymentsAccountId: user.paymentsAccountId,
              email: user.email,
              name: user.name,
              username: user.username,
              protected: user.protected,
              metadata: parseMetadataJson(user.metadataJson, 'user.metadata'),
            }
          : undefined,
        passthrough: request.passthrough,
        signal,
      });
      return {
        recordId: result.recordId,
        status: result.status,
        moderationId: result.moderationId,
        userId: result.userId,
        flagged: result.flagged,
        reasons: result.reasons,
        rules: result.rules,
        testMode: result.testMode,
      };
    }),

    GetRecord: unary(log, tenants, 'GetRecord', async (request, tenantId) =>
      toRecordMessage(await queries.getRecord(tenantId, required(request.recordId, 'record_id'))),
    ),

    ListRecords: unary(log, tenants, 'ListRecords', async (request, tenantId) => {
      const page = await queries.listRecords(tenantId, {
        limit: request.limit,
        startingAfter: request.startingAfter,
        endingBefore: request.endingBefore,
        clientId: request.clientId,
        entity: request.entity,
        status: request.status,
        userId: request.userId,
        newestFirst: request.newestFirst,
        createdAfter: request.createdAfter,
        createdBefore: request.createdBefore,
      });
      return { records: page.items.map(toRecordMessage), hasMore: page.hasMore };
    }),

    GetRecordEvents: unary(log, tenants, 'GetRecordEvents', async (request, tenantId) => {
      const events = await queries.getRecordEvents(tenantId, required(request.recordId, 'record_id'));
      return { events: events.map(toStoredEvent) };
    }),

    GetUserEvents: unary(log, tenants, 'GetUserEvents', async (request, tenantId) => {
      const events = await queries.getUserEvents(tenantId, required(request.userId, 'user_id'));
      return { events: events.map(toStoredEvent) };
    }),

    GetUser: unary(log, tenants, 'GetUser', async (request, tenantId) =>
      toUserMessage(await queries.getUser(tenantId, required(request.userId, 'user_id'))),
    ),

    ListUsers: unary(log, tenants, 'ListUsers', async (request, tenantId) => {
      const page = await queries.listUsers(tenantId, {
        limit: request.limit,
        startingAfter: request.startingAfter,
        endingBefore: request.endingBefore,
        clientId: request.clientId,
        email: request.email,
        status: request.status,
      });
      return { users: page.items.map(toUserMessage), hasMore: page.hasMore };
    }),

    ModerateRecordManually: unary(log, tenants, 'ModerateRecordManually', async (request, tenantId) => {
      const recordId = required(request.recordId, 'record_id');
      await service.moderateManually({
        tenantId,
        recordId,
        status: oneOf(RecordStatus, request.status, 'status'),
        reason: request.reason,
        actor: request.actor,
        correlationId: correlation(),
      });
      return toRecordMessage(await queries.getRecord(tenantId, recordId));
    }),

    SetUserStatus: unary(log, tenants, 'SetUserStatus', async (request, tenantId) => {
      const userId = required(request.userId, 'user_id');
      await service.setUserStatus({
        tenantId,
        userId,
        status: oneOf(UserStatus, request.status, 'status'),
        reason: request.reason,
        actor: request.actor,
        correlationId: correlation(),
      });
      return toUserMessage(await queries.getUser(tenantId, userId));
    }),

    CreateAppeal: unary(log, tenants, 'CreateAppeal', async (request, tenantId) => {
      const text = required(request.text, 'text');
      if (text.length > 1000) throw new ValidationError('text must be at most 1000 characters', { path: 'text' });
      const appealId = await service.createAppeal({
        tenantId,
        userId: required(request.userId, 'user_id'),
        text,
        correlationId: correlation(),
      });
      return toAppealMessage(await queries.getAppeal(tenantId, appealId));
    }),

    ListAppeals: unary(log, tenants, 'ListAppeals', async (request, tenantId) => {
      const page = await queries.listAppeals(tenantId, {
        limit: request.limit,
        startingAfter: request.startingAfter,
        status: request.status,
        userId: request.userId,
      });
      return { appeals: page.items.map(toAppealMessage), hasMore: page.hasMore };
    }),

    DecideAppeal: unary(log, tenants, 'DecideAppeal', async (request, tenantId) => {
      const appealId = required(request.appealId, 'appeal_id');
      if (request.decision !== 'Approved' && request.decision !== 'Rejected') {
        throw new ValidationError('decision must be Approved or Rejected', { path: 'decision' });
      }
      await service.decideAppeal({
        tenantId,
        appealId,
        decision: request.decision,
        reason: request.reason,
        actor: request.actor,
        correlationId: correlation(),
      });
      return toAppealMessage(await queries.getAppeal(tenantId, appealId));
    }),
  };
}
