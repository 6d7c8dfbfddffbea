import { BacktestAi, ulid, type BacktestJobDoc, type StartBacktest } from '@vigil/proto';
import type { z } from 'zod';
import { BacktestRunningError, BacktestTooLargeError } from '../errors';
import { consumeOrRefuse } from '../http/rate-limit';
import type { CreateBacktestBody } from '../routes/backtests/backtests.schema';
import type { BacktestState } from '../store/backtest-store';
import type { UseCaseDeps } from './deps';
import { handOverJob, jobCommand } from './hand-over-job';
import { candidateRules } from './rule-checks';

/** Records a backtest judges when the request names no `limit`. */
const DEFAULT_LIMIT = 1000;
/** The window of `maxPerHour`, seconds. */
const HOUR_S = 3600;

export type CreateBacktestInput = z.output<typeof CreateBacktestBody>;

/**
 * Creates a backtest: checks its bounds and version, takes one of the tenant's running slots, stores the job with the
 * version's rules and hands it to the moderators on the `backtests` topic. Used by the API and the console, with input already
 * parsed by `CreateBacktestBody`.
 */
export async function createBacktest(
  deps: UseCaseDeps,
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
  const command: StartBacktest = { type: 'StartBacktest', ...jobCommand(job, now) };
  await handOverJob(deps, command, deps.backtests, job);
  return { job, run: null, status: 'queued' };
}
