import type * as grpc from '@grpc/grpc-js';
import {
  CONFIG_VERSION_METADATA,
  parseConfigVersion,
  RecordStatus,
  ReportAction,
  ReportCategory,
  ReportGround,
  ReportOutcome,
  ComplaintOutcome,
  ReporterType,
  ReportTargetType,
  ulid,
  UserStatus,
  type ModerationServiceHandlers,
  type TenantVersions,
} from '@vigil/proto';
import type { Logger } from 'pino';
import { UnavailableError, ValidationError } from '../domain/errors';
import type { KeyedLimit } from './keyed-limit';
import type { TenantActivity } from './tenant-activity';
import type { ModerateInput } from '../service/moderate';
import type { ModerationUseCases } from '../service/moderation-use-cases';
import type { Queries } from '../service/queries';
import type { KnownTenants } from '../store/known-tenants';
import { toServiceError } from './errors';
import { createHashBankHandlers, toHashMatchMessage } from '../hash-banks/hash-bank-handlers';
import type { HashBankUseCases } from '../hash-banks/hash-bank-use-cases';
import {
  parseMetadataJson,
  toAppealMessage,
  toRecordMessage,
  toReportMessage,
  toStoredEvent,
  toUserMessage,
} from './mappers';

export interface HandlerDeps {
  /** Hash banks (hash-banks/): without them, their methods answer failed_precondition. */
  hashBanks?: HashBankUseCases;
  service: ModerationUseCases;
  queries: Queries;
  tenants: KnownTenants;
  /** Each call's tenant configuration version (gRPC metadata) is recorded here before the call is handled. */
  versions: TenantVersions;
  log: Logger;
  /**
   * Moderate calls in flight per tenant, weighted by size (see moderateWeight): the calls beyond wait their turn, so
   * one tenant's burst of large records queues behind itself instead of crowding every process the others need.
   */
  moderateLimit: KeyedLimit;
  /** Calls in flight per tenant (every method): a heavy Moderate call yields to the other tenants' calls. */
  activity: TenantActivity;
  /**
   * A Moderate call heavier than one unit (over 8 KiB of text and metadata) waits at most this long, milliseconds,
   * for a moment when no other tenant's call is in flight; 0 never waits.
   */
  heavyYieldMs: number;
  /** A heavy call begins to wait (`waiting` +1) and ends its wait: how, and after how long (seconds). */
  onYield?: { begin: () => void; end: (outcome: 'idle' | 'bound' | 'aborted', seconds: number) => void };
}

/** Bytes of record text per unit of a Moderate call's weight in `moderateLimit`. */
export const MODERATE_WEIGHT_BYTES = 8 * 1024;

/**
 * A Moderate call's share of its tenant's in-flight capacity: one unit, and one more per 8 KiB of text and metadata
 * (what the gateway parses, the engine reads and the store writes, each in proportion to its size).
 */
export function moderateWeight(request: { content?: { text?: string } | null; metadataJson?: string }): number {
  const bytes = (request.content?.text?.length ?? 0) + (request.metadataJson?.length ?? 0);
  return 1 + Math.floor(bytes / MODERATE_WEIGHT_BYTES);
}

export function required(value: string | undefined, path: string): string {
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
 * A page of the read model as a list answer: its items as messages under `field`, and whether more follow. (The list
 * queries take a list request as it is: their paging and filter fields are named as in the proto.)
 */
function listAnswer<T, M, F extends string>(
  field: F,
  page: { items: T[]; hasMore: boolean },
  toMessage: (item: T) => M,
): Record<F, M[]> & { hasMore: boolean } {
  return { [field]: page.items.map(toMessage), hasMore: page.hasMore } as Record<F, M[]> & { hasMore: boolean };
}

/** The call's deadline in epoch milliseconds, if the caller set one. */
function deadlineOf(call: grpc.ServerUnaryCall<unknown, unknown>): number | undefined {
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(at) ? at : undefined;
}

/** A moderation id a caller may choose: `mod_` and a ULID, as the moderator makes them. */
const MODERATION_ID = /^mod_[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * Wraps one async handler: checks that the request names a tenant that exists (and counts it as active for the
 * Moderate share), then hands the handler the request and that tenant, and resolves the callback with the value, or
 * with a gRPC status from the error mapping.
 */
export function unary<Req extends { tenantId?: string }, Res>(
  { log, tenants, versions, moderateLimit, activity }: HandlerDeps,
  method: string,
  handle: (request: Req, tenantId: string, signal: AbortSignal, deadline: number | undefined) => Promise<Res>,
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
        versions.observe(tenantId, parseConfigVersion(call.metadata.get(CONFIG_VERSION_METADATA)[0]));
        moderateLimit.touch(tenantId);
        const leave = activity.enter(tenantId);
        try {
          return await handle(call.request, tenantId, gone.signal, deadlineOf(call));
        } finally {
          leave();
        }
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
export function createModerationHandlers(deps: HandlerDeps): ModerationServiceHandlers {
  const { service, queries, moderateLimit, activity, heavyYieldMs, onYield } = deps;
  const correlation = (requestId?: string) => requestId || ulid();
  /** What every human decision carries: why, who, and a correlation id of its own. */
  const byHuman = (request: { reason: string; actor: string }) => ({
    reason: request.reason,
    actor: request.actor,
    correlationId: correlation(),
  });

  return {
    ...createHashBankHandlers(deps),
    Moderate: unary(deps, 'Moderate', async (request, tenantId, signal, deadline) => {
      const user = request.user ?? undefined;
      const moderationId = request.moderationId || undefined;
      if (moderationId !== undefined && !MODERATION_ID.test(moderationId)) {
        throw new ValidationError('moderation_id must be mod_ and a ULID', { path: 'moderation_id' });
      }
      const input: ModerateInput = {
        tenantId,
        // The caller's id makes the call a command applied once: sent again after a moderator went away mid-call, it
        // is answered from what the first one stored.
        ...(moderationId ? { moderationId, commandId: `moderate:${moderationId}` } : {}),
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
        deadline,
      };
      // A tenant with too many calls waiting is refused with TenantBusyError (unavailable). A heavy call, once its
      // turn comes, first yields to the other tenants' calls in flight (heavyYieldMs at most): a tenant streaming
      // large records then leaves the others moments without its work in every process they pass through.
      const weight = moderateWeight(request);
      const result = await moderateLimit.run(
        tenantId,
        async () => {
          if (weight > 1 && heavyYieldMs > 0 && activity.othersBusy(tenantId)) {
            const started = performance.now();
            onYield?.begin();
            const outcome = await activity.othersIdle(tenantId, heavyYieldMs, signal);
            onYield?.end(outcome, (performance.now() - started) / 1000);
          }
          return service.moderate(input);
        },
        { weight, signal },
      );
      return {
        recordId: result.recordId,
        status: result.status,
        moderationId: result.moderationId,
        userId: result.userId,
        flagged: result.flagged,
        reasons: result.reasons,
        rules: result.rules,
        testMode: result.testMode,
        ruleSetVersion: result.ruleSetVersion,
        maskedContent: result.maskedContent,
        hashMatches: (result.hashMatches ?? []).map(toHashMatchMessage),
      };
    }),

    GetRecord: unary(deps, 'GetRecord', async (request, tenantId) =>
      toRecordMessage(await queries.getRecord(tenantId, required(request.recordId, 'record_id'))),
    ),

    ListRecords: unary(deps, 'ListRecords', async (request, tenantId) =>
      listAnswer('records', await queries.listRecords(tenantId, request), toRecordMessage),
    ),

    GetRecordEvents: unary(deps, 'GetRecordEvents', async (request, tenantId) => {
      const events = await queries.getRecordEvents(tenantId, required(request.recordId, 'record_id'));
      return { events: events.map(toStoredEvent) };
    }),

    GetUserEvents: unary(deps, 'GetUserEvents', async (request, tenantId) => {
      const events = await queries.getUserEvents(tenantId, required(request.userId, 'user_id'));
      return { events: events.map(toStoredEvent) };
    }),

    GetReportEvents: unary(deps, 'GetReportEvents', async (request, tenantId) => {
      const events = await queries.getReportEvents(tenantId, required(request.reportId, 'report_id'));
      return { events: events.map(toStoredEvent) };
    }),

    GetUser: unary(deps, 'GetUser', async (request, tenantId) =>
      toUserMessage(await queries.getUser(tenantId, required(request.userId, 'user_id'))),
    ),

    ListUsers: unary(deps, 'ListUsers', async (request, tenantId) =>
      listAnswer('users', await queries.listUsers(tenantId, request), toUserMessage),
    ),

    ModerateRecordManually: unary(deps, 'ModerateRecordManually', async (request, tenantId) => {
      const recordId = required(request.recordId, 'record_id');
      const moderationId = request.moderationId || undefined;
      if (moderationId !== undefined && !MODERATION_ID.test(moderationId)) {
        throw new ValidationError('moderation_id must be mod_ and a ULID', { path: 'moderation_id' });
      }
      await service.moderateManually({
        tenantId,
        recordId,
        status: oneOf(RecordStatus, request.status, 'status'),
        ...(moderationId ? { moderationId } : {}),
        ...(request.policy ? { policy: request.policy } : {}),
        ...byHuman(request),
      });
      return toRecordMessage(await queries.getRecord(tenantId, recordId));
    }),

    SetUserStatus: unary(deps, 'SetUserStatus', async (request, tenantId) => {
      const userId = required(request.userId, 'user_id');
      await service.setUserStatus({
        tenantId,
        userId,
        status: oneOf(UserStatus, request.status, 'status'),
        ...(request.policy ? { policy: request.policy } : {}),
        ...byHuman(request),
      });
      return toUserMessage(await queries.getUser(tenantId, userId));
    }),

    CreateAppeal: unary(deps, 'CreateAppeal', async (request, tenantId) => {
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

    ListAppeals: unary(deps, 'ListAppeals', async (request, tenantId) =>
      listAnswer('appeals', await queries.listAppeals(tenantId, request), toAppealMessage),
    ),

    DecideAppeal: unary(deps, 'DecideAppeal', async (request, tenantId) => {
      const appealId = required(request.appealId, 'appeal_id');
      if (request.decision !== 'Approved' && request.decision !== 'Rejected') {
        throw new ValidationError('decision must be Approved or Rejected', { path: 'decision' });
      }
      await service.decideAppeal({
        tenantId,
        appealId,
        decision: request.decision,
        ...byHuman(request),
      });
      return toAppealMessage(await queries.getAppeal(tenantId, appealId));
    }),

    CreateReport: unary(deps, 'CreateReport', async (request, tenantId) => {
      const { report, duplicate } = await service.createReport({
        tenantId,
        correlationId: correlation(),
        target: {
          type: oneOf(ReportTargetType, request.targetType, 'target.type'),
          id: request.targetId || undefined,
          clientId: request.targetClientId || undefined,
        },
        reporter: {
          type: oneOf(ReporterType, request.reporterType, 'reporter.type'),
          id: required(request.reporterId, 'reporter.id'),
          email: request.reporterEmail || undefined,
        },
        category: oneOf(ReportCategory, request.category, 'category'),
        ground: oneOf(ReportGround, request.ground, 'ground'),
        explanation: required(request.explanation, 'explanation'),
        legalGround: request.legalGround || undefined,
        url: request.url || undefined,
        goodFaith: request.goodFaith,
      });
      return { report: toReportMessage(await queries.getReport(tenantId, report._id)), duplicate };
    }),

    GetReport: unary(deps, 'GetReport', async (request, tenantId) =>
      toReportMessage(await queries.getReport(tenantId, required(request.reportId, 'report_id'))),
    ),

    ListReports: unary(deps, 'ListReports', async (request, tenantId) =>
      listAnswer('reports', await queries.listReports(tenantId, request), toReportMessage),
    ),

    DecideReport: unary(deps, 'DecideReport', async (request, tenantId) => {
      const reportId = required(request.reportId, 'report_id');
      await service.decideReport({
        tenantId,
        reportId,
        decision: {
          outcome: oneOf(ReportOutcome, request.outcome, 'outcome'),
          action: request.action ? oneOf(ReportAction, request.action, 'action') : undefined,
          reason: request.reason,
          actor: request.actor,
          ...(request.policy ? { policy: request.policy } : {}),
        },
        correlationId: correlation(),
      });
      return toReportMessage(await queries.getReport(tenantId, reportId));
    }),

    FileReportComplaint: unary(deps, 'FileReportComplaint', async (request, tenantId) => {
      const reportId = required(request.reportId, 'report_id');
      await service.fileComplaint({
        tenantId,
        reportId,
        text: required(request.text, 'text'),
        correlationId: correlation(),
      });
      return toReportMessage(await queries.getReport(tenantId, reportId));
    }),

    DecideReportComplaint: unary(deps, 'DecideReportComplaint', async (request, tenantId) => {
      const reportId = required(request.reportId, 'report_id');
      await service.decideComplaint({
        tenantId,
        reportId,
        decision: {
          outcome: oneOf(ComplaintOutcome, request.outcome, 'outcome'),
          action: request.action ? oneOf(ReportAction, request.action, 'action') : undefined,
          reason: request.reason,
          actor: request.actor,
          ...(request.policy ? { policy: request.policy } : {}),
        },
        correlationId: correlation(),
      });
      return toReportMessage(await queries.getReport(tenantId, reportId));
    }),
  };
}
