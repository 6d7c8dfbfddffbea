import {
  findPreset,
  LIMITS,
  ruleFromPreset,
  RULE_PRESETS,
  ruleSetBudgetIssues,
  usesPrompts,
  type RuleSet,
} from '@vigil/proto';
import type { ApiRouter } from '../../http/api-router';
import { ConflictError, LimitExceededError, NotFoundError, PromptRulesDisabledError } from '../../errors';
import { body } from '../../http/validate';
import { idParam, principalOf, type RouteDeps } from '../deps';
import { PresetList, RulesBody, SettingsPatchBody, SettingsView } from './rules.schema';

/** Without an LLM a prompt strategy could never flag: refuse it rather than store a rule that silently does nothing. */
export function refuseUnjudgeable(deps: RouteDeps, ruleSet: RuleSet): void {
  if (!deps.promptRulesEnabled && usesPrompts(ruleSet)) {
    throw new PromptRulesDisabledError(
      'prompt strategies are not available: this deployment has no LLM configured (PROMPT_RULES_ENABLED)',
    );
  }
}

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
      refuseUnjudgeable(deps, ruleSet);
      await deps.configStore.putRules(principalOf(ctx).tenantId, ruleSet);
      ctx.body = ruleSet;
    },
  );

  api.route(
    {
      method: 'get',
      path: '/rules/presets',
      tag: 'rules',
      summary: 'Ready-made rules a tenant can add by id (each versioned; adding one copies it).',
      status: 200,
      response: PresetList,
    },
    (ctx) => {
      ctx.body = { presets: RULE_PRESETS };
      return Promise.resolve();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/rules/presets/:id',
      tag: 'rules',
      summary:
        "Add a preset to the rule set as the tenant's own rule (id = preset id, with presetVersion); answers the rule set.",
      status: 201,
      response: RulesBody,
    },
    async (ctx) => {
      const preset = findPreset(idParam(ctx));
      if (!preset) throw new NotFoundError('preset not found');
      const rule = ruleFromPreset(preset);
      const tenantId = principalOf(ctx).tenantId;
      // Decided on the stored rule set, again if another change landed first: concurrent adds all land.
      ctx.body = await deps.configStore.changeRules(tenantId, (current) => {
        if (current.rules.some((existing) => existing.id === rule.id)) {
          throw new ConflictError('the rule set already has a rule with this id', { ruleId: rule.id });
        }
        if (current.rules.length >= LIMITS.rules) {
          throw new LimitExceededError('the rule set is full', { limit: LIMITS.rules });
        }
        const ruleSet: RuleSet = { rules: [...current.rules, rule] };
        const [overBudget] = ruleSetBudgetIssues(ruleSet);
        if (overBudget) throw new LimitExceededError(overBudget.message, { budget: 'rule set' });
        refuseUnjudgeable(deps, ruleSet);
        return ruleSet;
      });
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
      const tenantId = principalOf(ctx).tenantId;
      const [settings, stripeSecretKey] = await Promise.all([
        deps.configStore.getSettings(tenantId),
        deps.paymentKeys.hintOf(tenantId),
      ]);
      ctx.body = { ...settings, payments: { stripeSecretKey } };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/settings',
      tag: 'settings',
      summary: 'Change some settings; the others keep their value (a Stripe key is stored encrypted, shown as a hint).',
      body: SettingsPatchBody,
      status: 200,
      response: SettingsView,
    },
    async (ctx) => {
      const { payments, ...patch } = body(ctx, SettingsPatchBody);
      const tenantId = principalOf(ctx).tenantId;
      const key = payments?.stripeSecretKey;
      // Refused before anything is written, so a request is applied whole or not at all.
      if (typeof key === 'string') deps.paymentKeys.assertCanStore();
      const settings = await deps.configStore.patchSettings(tenantId, patch);
      if (key !== undefined) await deps.paymentKeys.set(tenantId, key);
      ctx.body = { ...settings, payments: { stripeSecretKey: await deps.paymentKeys.hintOf(tenantId) } };
    },
  );
}
