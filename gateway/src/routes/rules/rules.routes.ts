import { LIMITS } from '@vigil/proto';
import {
  DEFAULT_RULES,
  findPreset,
  ruleFromPreset,
  RULE_PRESETS,
  ruleSetBudgetIssues,
  type RuleSet,
} from '@vigil/proto/rules';
import type { ApiRouter } from '../../http/api-router';
import { ConflictError, LimitExceededError, NotFoundError } from '../../errors';
import { body, query } from '../../http/validate';
import type { RuleVersionDoc } from '../../store/rule-version-store';
import { idParam, versionParam } from '../../http/params';
import { promoteVersion } from '../../use-cases/promote-version';
import { putRules } from '../../use-cases/put-rules';
import { rollBackVersion } from '../../use-cases/roll-back-version';
import { refuseUnjudgeable } from '../../use-cases/rule-checks';
import { saveDraft } from '../../use-cases/save-draft';
import { actorOf, principalOf, type RouteDeps } from '../deps';
import { diffRuleSets } from './rule-set-diff';
import {
  DiffQuery,
  LiveRulesView,
  PresetList,
  RollBackBody,
  RuleSetChangeBody,
  RuleSetDiffView,
  RuleVersionData,
  RuleVersionList,
  RuleVersionListQuery,
  SettingsPatchBody,
  SettingsView,
} from './rules.schema';

function summaryOf(doc: RuleVersionDoc, liveVersion: number) {
  return {
    version: doc.version,
    kind: doc.kind,
    live: doc.version === liveVersion,
    author: doc.author,
    ...(doc.note !== undefined ? { note: doc.note } : {}),
    ...(doc.basedOn !== undefined ? { basedOn: doc.basedOn } : {}),
    createdAt: doc.createdAt.toISOString(),
  };
}

/**
 * Rule set and settings: one live document per tenant, read by the moderator. Every rule set written is a numbered,
 * immutable version (`/rules/versions`): the live one judges, drafts wait beside it.
 */
export function ruleRoutes(api: ApiRouter, deps: RouteDeps): void {
  api.route(
    {
      method: 'get',
      path: '/rules',
      tag: 'rules',
      summary: "The tenant's live rule set and its version (the default set, version 0, until replaced).",
      status: 200,
      response: LiveRulesView,
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
      summary: 'Replace the rule set: written as a new version, live at once (`note` says why).',
      body: RuleSetChangeBody,
      status: 200,
      response: LiveRulesView,
    },
    async (ctx) => {
      const { note, ...ruleSet } = body(ctx, RuleSetChangeBody);
      ctx.body = await putRules(deps, principalOf(ctx).tenantId, ruleSet, {
        author: actorOf(ctx),
        ...(note !== undefined ? { note } : {}),
      });
    },
  );

  api.route(
    {
      method: 'get',
      path: '/rules/versions',
      tag: 'rules',
      summary: "The tenant's rule set versions, newest first (without their rules).",
      query: RuleVersionListQuery,
      status: 200,
      response: RuleVersionList,
    },
    async (ctx) => {
      const q = query(ctx, RuleVersionListQuery);
      const tenantId = principalOf(ctx).tenantId;
      const [page, live] = await Promise.all([
        deps.configStore.ruleVersions.list(tenantId, q.limit, q.starting_after),
        deps.configStore.getRules(tenantId),
      ]);
      ctx.body = { data: page.docs.map((doc) => summaryOf(doc, live.version)), has_more: page.hasMore };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/rules/versions',
      tag: 'rules',
      summary: 'Save a rule set as a draft version: it judges nothing until promoted.',
      body: RuleSetChangeBody,
      status: 201,
      response: RuleVersionData,
    },
    async (ctx) => {
      const { note, ...ruleSet } = body(ctx, RuleSetChangeBody);
      const tenantId = principalOf(ctx).tenantId;
      const doc = await saveDraft(deps, tenantId, ruleSet, {
        author: actorOf(ctx),
        ...(note !== undefined ? { note } : {}),
      });
      const live = await deps.configStore.getRules(tenantId);
      ctx.status = 201;
      ctx.body = { data: { ...summaryOf(doc, live.version), rules: doc.rules } };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/rules/versions/:version',
      tag: 'rules',
      summary: 'One rule set version, with its rules.',
      status: 200,
      response: RuleVersionData,
    },
    async (ctx) => {
      const tenantId = principalOf(ctx).tenantId;
      const [doc, live] = await Promise.all([
        deps.configStore.versionOf(tenantId, versionParam(ctx)),
        deps.configStore.getRules(tenantId),
      ]);
      ctx.body = { data: { ...summaryOf(doc, live.version), rules: doc.rules } };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/rules/versions/:version/diff',
      tag: 'rules',
      summary: 'What changes, rule by rule, from this version to `to` (the live one by default; 0: the default set).',
      query: DiffQuery,
      status: 200,
      response: RuleSetDiffView,
    },
    async (ctx) => {
      const tenantId = principalOf(ctx).tenantId;
      const from = versionParam(ctx);
      const { to: wanted } = query(ctx, DiffQuery);
      const rulesOf = async (version: number) =>
        version === 0 ? DEFAULT_RULES.rules : (await deps.configStore.versionOf(tenantId, version)).rules;
      const to = wanted ?? (await deps.configStore.getRules(tenantId)).version;
      ctx.body = { from, to, ...diffRuleSets(await rulesOf(from), await rulesOf(to)) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/rules/versions/:version/promote',
      tag: 'rules',
      summary: 'Make a draft the live rule set (409 conflict for a version that is not a draft).',
      status: 200,
      response: LiveRulesView,
    },
    async (ctx) => {
      ctx.body = await promoteVersion(deps, principalOf(ctx).tenantId, versionParam(ctx));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/rules/versions/:version/rollback',
      tag: 'rules',
      summary: "Make an earlier version's rules live again, as a new version that names it (`basedOn`).",
      body: RollBackBody,
      status: 201,
      response: LiveRulesView,
    },
    async (ctx) => {
      const { note } = body(ctx, RollBackBody);
      ctx.status = 201;
      ctx.body = await rollBackVersion(deps, principalOf(ctx).tenantId, versionParam(ctx), {
        author: actorOf(ctx),
        ...(note !== undefined ? { note } : {}),
      });
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
        "Add a preset to the rule set as the tenant's own rule (id = preset id, with presetVersion), as a new live " +
        'version; answers the rule set and its version.',
      status: 201,
      response: LiveRulesView,
    },
    async (ctx) => {
      const preset = findPreset(idParam(ctx));
      if (!preset) throw new NotFoundError('preset not found');
      const rule = ruleFromPreset(preset);
      const tenantId = principalOf(ctx).tenantId;
      // Decided on the stored rule set, again if another change landed first: concurrent adds all land.
      const stored = await deps.configStore.changeRules(
        tenantId,
        (current) => {
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
        },
        { author: actorOf(ctx), note: `preset ${preset.id} added` },
      );
      ctx.body = stored;
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
