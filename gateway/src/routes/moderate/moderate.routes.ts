import type { ApiRouter } from '../../http/api-router';
import { body } from '../../http/validate';
import { moderate } from '../../use-cases/moderate';
import { callerOf, type RouteDeps } from '../deps';
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
      const result = await moderate(deps, callerOf(ctx), input);
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
