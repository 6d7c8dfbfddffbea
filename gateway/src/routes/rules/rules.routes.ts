import type { ApiRouter } from '../../http/api-router';
import { body } from '../../http/validate';
import { principalOf, type RouteDeps } from '../deps';
import { RulesBody, SettingsPatchBody, SettingsView } from './rules.schema';

/** Rule set and settings: one document per tenant, read by the moderator (it caches them briefly). */
export function ruleRoutes(api: ApiRouter, deps: RouteDeps): void {
  api.route(
    {
      method: 'get',
      path: '/rules',
      tag: 'rules',
      summary: "The tenant's rule set (the default one until replaced).",
      status: 200,
      response: RulesBody,
    },
    async (ctx) => {
      ctx.body = await deps.configStore.getRules(principalOf(ctx).tenantId);
    },
  );

  api.route(
    {
      method: 'put',
      path: '/rules',
      tag: 'rules',
      summary: 'Replace the rule set.',
      body: RulesBody,
      status: 200,
      response: RulesBody,
    },
    async (ctx) => {
      const ruleSet = body(ctx, RulesBody);
      await deps.configStore.putRules(principalOf(ctx).tenantId, ruleSet);
      ctx.body = ruleSet;
    },
  );

  api.route(
    {
      method: 'get',
      path: '/settings',
      tag: 'settings',
      summary: "The tenant's settings.",
      status: 200,
      response: SettingsView,
    },
    async (ctx) => {
      ctx.body = await deps.configStore.getSettings(principalOf(ctx).tenantId);
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/settings',
      tag: 'settings',
      summary: 'Change some settings; the others keep their value.',
      body: SettingsPatchBody,
      status: 200,
      response: SettingsView,
    },
    async (ctx) => {
      const patch = body(ctx, SettingsPatchBody);
      ctx.body = await deps.configStore.patchSettings(principalOf(ctx).tenantId, patch);
    },
  );
}
