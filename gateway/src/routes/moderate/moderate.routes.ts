import { ulid } from '@vigil/proto';
import type { ApiRouter } from '../../http/api-router';
import { body } from '../../http/validate';
import { requestIdOf } from '../../http/request-id';
import { principalOf, type RouteDeps } from '../deps';
import { toGrpcUser } from '../shared/user-input';
import { ModerateBody, ModerateResponse } from './moderate.schema';

export function moderateRoutes(api: ApiRouter, deps: RouteDeps): void {
  api.route(
    {
      method: 'post',
      path: '/moderate',
      tag: 'moderation',
      summary: 'Moderate a record now and return the result (passthrough: without storing it).',
      body: ModerateBody,
      status: 200,
      response: ModerateResponse,
    },
    async (ctx) => {
      const input = body(ctx, ModerateBody);
      const requestId = requestIdOf(ctx);
      const result = await deps.moderator.call(
        'moderate',
        {
          tenantId: principalOf(ctx).tenantId,
          clientId: input.clientId,
          clientUrl: input.clientUrl,
          name: input.name,
          entity: input.entity,
          content: input.content,
          metadataJson: input.metadata === undefined ? undefined : JSON.stringify(input.metadata),
          user: input.user ? toGrpcUser(input.user) : undefined,
          passthrough: input.passthrough ?? false,
          requestId,
          // One per request: the moderator applies it once, so the client may send the call again to another
          // moderator when the first went away mid-call.
          moderationId: `mod_${ulid()}`,
        },
        { requestId },
      );
      ctx.body = {
        id: result.recordId,
        status: result.status,
        moderation: result.moderationId,
        ...(result.userId ? { user: result.userId } : {}),
        flagged: result.flagged,
        reasons: result.reasons,
        rules: result.rules,
        testMode: result.testMode,
        ruleSetVersion: result.ruleSetVersion,
        ...(result.maskedContent !== undefined && result.maskedContent !== null
          ? { maskedContent: result.maskedContent }
          : {}),
        message: 'Success',
      };
    },
  );
}
