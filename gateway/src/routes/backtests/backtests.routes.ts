import {
  BacktestAi,
  DEFAULT_RULES,
  RuleSet,
  ulid,
  type BacktestJobDoc,
  type Rule,
  type StartBacktest,
  type StartRetroaction,
} from '@vigil/proto';
import type { z } from 'zod';
import type { ApiRouter } from '../../http/api-router';
import {
  BacktestRunningError,
  BacktestTooLargeError,
  InvalidRuleSetError,
  NotFoundError,
  UnknownRuleVersionError,
} from '../../errors';
import { consumeOrRefuse } from '../../http/rate-limit';
import { requestIdOf } from '../../http/request-id';
import { body } from '../../http/validate';
import type { BacktestState } from '../../store/backtest-store';
import { actorOf, idParam, principalOf, type RouteDeps } from '../deps';
import { refuseUnjudgeable } from '../rules/rules.routes';
import { BacktestData, BacktestList, CreateBacktestBody, type BacktestView } from './backtests.schema';

/** Bounds of backtests in this deployment (`BACKTEST_*`). */
export interface BacktestSettings {
  maxRunning: number;
  /** Backtests a tenant may create per hour (0: no bound). */
  maxPerHour: number;
  maxRecords: number;
  maxAiCalls: number;
  ttlSeconds: number;
}

/** Records a backtest judges when the request names no `limit`. */
const DEFAULT_LIMIT = 1000;
/** The window of `maxPerHour`, seconds. */
const HOUR_S = 3600;

export type CreateBacktestInput = z.output<typeof CreateBacktestBody>;

/** The rules of a version, checked as a rule set written today would be; the API's errors when not. */
export async function candidateRules(deps: RouteDeps, tenantId: string, version: number): Promise<Rule[]> {
  let rules: Rule[];
  if (version === 0) rules = DEFAULT_RULES.rules;
  else {
    try {
      rules = (await deps.configStore.versionOf(tenantId, version)).rules;
    } catch (err) {
      if (err instanceof NotFoundError)
        throw new UnknownRuleVersionError('the tenant has no rule set version with this number', { version });
      throw err;
    }
  }
  const checked = RuleSet.safeParse({ rules });
  if (!checked.success) {
    throw new InvalidRuleSetError('the rule set version no longer passes the checks of a rule set', {
      version,
      issues: checked.error.issues.map((issue) => ({ path: issue.path, message: issue.message })),
    });
  }
  refuseUnjudgeable(deps, checked.data);
  return checked.data.rules;
}

/**
 * Creates a backtest: checks its bounds and version, takes one of the tenant's running slots, stores the job with the
 * version's rules and hands it to the moderators on the `backtests` topic. Used by the API and the console.
 */
export async function createBacktest(
  deps: RouteDeps,
  ctx: { tenantId: string; author: string; requestId: string },
  input: CreateBacktestInput,
): Promise<BacktestState> {
  const limits = deps.backtestSettings;
  const limit = input.limit ?? Math.min(DEFAULT_LIMIT, limits.maxRecords);
  if (limit > limits.maxRecords)
    throw new BacktestTooLargeError(`a backtest judges at most ${limits.maxRecords} records`, {
      limit: limits.maxRecords,
    });
  if (input.ai !== undefined && input.ai.maxCalls > limits.maxAiCalls)
    throw new BacktestTooLargeError(`a backtest makes at most ${limits.maxAiCalls} AI calls`, {
      limit: limits.maxAiCalls,
    });
  // Within the deployment's bound, so within the job's schema (whose bound is the largest a deployment may set).
  const ai = BacktestAi.parse(input.ai ?? {});
  const rules = await candidateRules(deps, ctx.tenantId, input.version);
  const now = new Date();
  const { version, ai: _ai, ...filters } = input;
  void _ai;
  const selection = { ...filters, limit };
  const job: BacktestJobDoc = {
    _id: `bt_${ulid()}`,
    tenantId: ctx.tenantId,
    version,
    rules,
    // A fixed end: records created while the job waits or runs are not part of it, and a restarted run sees the same.
    selection: { ...selection, createdBefore: selection.createdBefore ?? now.toISOString() },
    ai,
    author: ctx.author,
    createdAt: now,
    expiresAt: new Date(now.getTime() + limits.ttlSeconds * 1000),
  };
  if (!(await deps.backtests.create(job, limits.maxRunning))) {
    throw new BacktestRunningError(
      `at most ${limits.maxRunning} backtest${limits.maxRunning === 1 ? '' : 's'} of a tenant run at once`,
      { limit: limits.maxRunning },
    );
  }
  // Counted once the job holds its slot, so a request refused for any other reason counts nothing; the one refused
  // here gives its slot back.
  try {
    consumeOrRefuse(
      deps.rateLimiter,
      `backtests:${ctx.tenantId}`,
      { requests: limits.maxPerHour, windowSeconds: HOUR_S },
      `a tenant creates at most ${limits.maxPerHour} backtests an hour`,
      { limit: limits.maxPerHour, windowSeconds: HOUR_S },
    );
  } catch (err) {
    await deps.backtests.discard(job);
    throw err;
  }
  const id = ulid();
  const command: StartBacktest = {
    type: 'StartBacktest',
    id,
    tenantId: ctx.tenantId,
    jobId: job._id,
    issuedAt: now.toISOString(),
  };
  await handOverJob(deps, command, () => deps.backtests.discard(job));
  return { job, run: null, status: 'queued' };
}

/**
 * Sends a job's start command on the backtests' topic, keyed by tenant: a job of either kind (backtest, retroaction)
 * runs off the live path, one after another per tenant. A job not handed over is discarded, since nothing would run
 * it (and its slot is free again).
 */
export async function handOverJob(
  deps: RouteDeps,
  command: StartBacktest | StartRetroaction,
  discard: () => Promise<unknown>,
): Promise<void> {
  try {
    await deps.commands.send({
      topic: deps.topics.backtests,
      key: command.tenantId,
      id: command.id,
      type: command.type,
      value: command,
    });
  } catch (err) {
    await discard().catch(() => undefined);
    throw err;
  }
}

export function backtestView(state: BacktestState, withResult = true): z.input<typeof BacktestView> {
  const { job, run } = state;
  return {
    id: job._id,
    version: job.version,
    status: state.status,
    ...(state.error ? { error: state.error } : {}),
    selection: job.selection,
    ai: job.ai,
    progress: { selected: run?.selected ?? null, processed: run?.processed ?? 0 },
    author: job.author,
    createdAt: job.createdAt.toISOString(),
    startedAt: run?.startedAt.toISOString() ?? null,
    finishedAt: run?.finishedAt?.toISOString() ?? null,
    expiresAt: job.expiresAt.toISOString(),
    result: withResult ? (run?.result ?? null) : null,
  };
}

/** A job of the caller's tenant named by the `:id` path parameter. */
export async function backtestOf(deps: RouteDeps, tenantId: string, id: string): Promise<BacktestState> {
  const state = await deps.backtests.get(tenantId, id);
  if (!state) throw new NotFoundError('backtest not found');
  return state;
}

/** Backtests: a rule set version run over stored records without acting, as a job (create, read, cancel). */
export function backtestRoutes(api: ApiRouter, deps: RouteDeps): void {
  api.route(
    {
      method: 'post',
      path: '/backtests',
      tag: 'backtests',
      summary:
        'Run a rule set version over stored records without acting (asynchronous job). 422 unknown_rule_version, ' +
        'invalid_rule_set or backtest_too_large; 409 backtest_running when the tenant’s running backtests are at their ' +
        'bound; 429 rate_limited past the backtests a tenant may create per hour.',
      body: CreateBacktestBody,
      status: 202,
      response: BacktestData,
    },
    async (ctx) => {
      const input = body(ctx, CreateBacktestBody);
      const state = await createBacktest(
        deps,
        { tenantId: principalOf(ctx).tenantId, author: actorOf(ctx), requestId: requestIdOf(ctx) },
        input,
      );
      ctx.status = 202;
      ctx.body = { data: backtestView(state) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/backtests',
      tag: 'backtests',
      summary:
        'The tenant’s backtests kept now (within their time to live), newest first, at most 50, without results.',
      status: 200,
      response: BacktestList,
    },
    async (ctx) => {
      const states = await deps.backtests.list(principalOf(ctx).tenantId);
      ctx.body = {
        data: states.map((state) => {
          const { result: _result, ...view } = backtestView(state, false);
          void _result;
          return view;
        }),
        has_more: false,
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/backtests/:id',
      tag: 'backtests',
      summary: 'A backtest: status, progress and, once succeeded, its result.',
      status: 200,
      response: BacktestData,
    },
    async (ctx) => {
      ctx.body = { data: backtestView(await backtestOf(deps, principalOf(ctx).tenantId, idParam(ctx))) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/backtests/:id/cancel',
      tag: 'backtests',
      summary: 'Cancel a backtest: it stops at its next batch of records (one that ended stays as it ended).',
      status: 202,
      response: BacktestData,
    },
    async (ctx) => {
      const state = await backtestOf(deps, principalOf(ctx).tenantId, idParam(ctx));
      ctx.status = 202;
      ctx.body = { data: backtestView(await deps.backtests.cancel(state)) };
    },
  );
}
