import { z } from 'zod';
import type { ApiRouter } from '../../http/api-router';
import { body } from '../../http/validate';
import { principalOf, type RouteDeps } from '../deps';
import { setShadowVersion } from '../../use-cases/set-shadow-version';

const ShadowVersionBody = z.strictObject({
  version: z.number().int().min(1).max(999_999_999).nullable().meta({
    description: 'The rule set version to run in shadow beside the live one (a draft, say); null: none.',
  }),
});
const ShadowVersionView = z.object({
  data: z.object({
    version: z.number().int().nullable().meta({
      description: 'The version run in shadow; null: none. Its counts are in GET /rules/precision under its number.',
    }),
  }),
});

/** A whole rule set version run in shadow: read and set. */
export function shadowVersionRoutes(api: ApiRouter, deps: RouteDeps): void {
  api.route(
    {
      method: 'get',
      path: '/rules/shadow',
      tag: 'rules',
      summary: 'The rule set version run in shadow beside the live one, or null.',
      status: 200,
      response: ShadowVersionView,
    },
    async (ctx) => {
      ctx.body = { data: { version: await deps.configStore.shadowVersion(principalOf(ctx).tenantId) } };
    },
  );

  api.route(
    {
      method: 'put',
      path: '/rules/shadow',
      tag: 'rules',
      summary:
        'Run a rule set version in shadow beside the live one, without acting (null: stop). One at a time; promoting ' +
        'it ends its shadow. 422 unknown_rule_version or invalid_rule_set; 409 conflict for the live version.',
      body: ShadowVersionBody,
      status: 200,
      response: ShadowVersionView,
    },
    async (ctx) => {
      const { version } = body(ctx, ShadowVersionBody);
      ctx.body = { data: { version: await setShadowVersion(deps, principalOf(ctx).tenantId, version) } };
    },
  );
}
