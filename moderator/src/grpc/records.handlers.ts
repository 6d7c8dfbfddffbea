import { RecordStatus, type ModerationServiceHandlers } from '@vigil/proto';
import { moderate, type ModerateInput } from '../service/moderate';
import { moderateManually } from '../service/record-decisions';
import { toRecordMessage, toStoredEvent, parseMetadataJson } from './mappers';
import { toHashMatchMessage } from '../hash-banks/hash-bank-handlers';
import {
  byHuman,
  chosenModerationId,
  correlation,
  listAnswer,
  oneOf,
  required,
  unary,
  type HandlerDeps,
} from './unary';

/** Bytes of record text per unit of a Moderate call's weight in `moderateLimit`. */
const MODERATE_WEIGHT_BYTES = 8 * 1024;

/**
 * A Moderate call's share of its tenant's in-flight capacity: one unit, and one more per 8 KiB of text and metadata
 * (what the gateway parses, the engine reads and the store writes, each in proportion to its size).
 */
function moderateWeight(request: { content?: { text?: string } | null; metadataJson?: string }): number {
  const bytes = (request.content?.text?.length ?? 0) + (request.metadataJson?.length ?? 0);
  return 1 + Math.floor(bytes / MODERATE_WEIGHT_BYTES);
}

/** Records: moderate, read, list, their events, and a person's decision on one. */
export function recordHandlers(
  deps: HandlerDeps,
): Pick<
  ModerationServiceHandlers,
  'Moderate' | 'GetRecord' | 'ListRecords' | 'GetRecordEvents' | 'ModerateRecordManually'
> {
  const { useCases, queries, moderateLimit, activity, heavyYieldMs, onYield } = deps;
  return {
    Moderate: unary(deps, 'Moderate', async (request, tenantId, signal, deadline) => {
      const user = request.user ?? undefined;
      const moderationId = chosenModerationId(request.moderationId);
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
          return moderate(useCases, input);
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

    ModerateRecordManually: unary(deps, 'ModerateRecordManually', async (request, tenantId) => {
      const recordId = required(request.recordId, 'record_id');
      const moderationId = chosenModerationId(request.moderationId);
      await moderateManually(useCases, {
        tenantId,
        recordId,
        status: oneOf(RecordStatus, request.status, 'status'),
        ...(moderationId ? { moderationId } : {}),
        ...(request.policy ? { policy: request.policy } : {}),
        ...byHuman(request),
      });
      return toRecordMessage(await queries.getRecord(tenantId, recordId));
    }),
  };
}
