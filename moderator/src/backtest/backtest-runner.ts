import { type BacktestJobDoc } from '@vigil/proto';
import { StoredRuleSet, type RuleSet } from '@vigil/proto/rules';
import type { Logger } from 'pino';
import type { EngineResult, ModerationEngine } from '../engine';
import type { RecordState } from '../domain/record';
import type { TenantConfigCache } from '../store/tenant-config';
import type { BacktestStore } from './backtest-store';
import { BacktestTally } from './backtest-tally';
import { BatchJobInterrupted, runBatchJob, type JobOutcome } from './batch-job';
import { Pacer, type LivePriority } from './pacer';

export interface BacktestRunnerOptions {
  store: BacktestStore;
  engine: ModerationEngine;
  tenants: Pick<TenantConfigCache, 'get'>;
  log: Logger;
  /** Records judged per second at most, per job. */
  ratePerSecond: number;
  /** Live moderations come first: the job's background rate beside them. */
  live?: LivePriority;
  /** Records judged at once per job. */
  concurrency: number;
  /** Records between two progress writes (each also reads whether the job was cancelled). */
  batchSize: number;
  /** Which AI providers this moderator has: a strategy of one it lacks never flags and costs nothing. */
  ai: { provider: boolean; llm: boolean };
  /** Hears each record gone through (metrics). */
  onRecord?: (outcome: 'judged' | 'passthrough' | 'gone') => void;
  /** Hears each run's end (metrics). */
  onJob?: (outcome: JobOutcome) => void;
}

const isAi = (type: string) => type === 'openai-moderation' || type === 'prompt';

/** The rule set without AI-provider strategies; a rule left with none keeps an empty list and never flags. */
export function withoutAi(ruleSet: RuleSet): RuleSet {
  return {
    rules: ruleSet.rules.map((rule) => ({
      ...rule,
      strategies: rule.strategies.filter((strategy) => !isAi(strategy.type)),
    })),
  };
}

/** Provider and LLM calls one record costs under a rule set: one moderation call, plus one per prompt strategy. */
export function aiCallsPerRecord(ruleSet: RuleSet, ai: { provider: boolean; llm: boolean }, entity: string): number {
  const rules = ruleSet.rules.filter(
    (rule) => rule.enabled && (rule.entities.length === 0 || rule.entities.includes(entity)),
  );
  const strategies = rules.flatMap((rule) => rule.strategies);
  const provider = ai.provider && strategies.some((strategy) => strategy.type === 'openai-moderation') ? 1 : 0;
  const prompts = ai.llm ? strategies.filter((strategy) => strategy.type === 'prompt').length : 0;
  return provider + prompts;
}

/**
 * Runs one backtest: the job's rule set over its selected records, judged by the same engine as live moderations but
 * as a tenant of its own (`backtest:<tenantId>`), so the engine's per-tenant thread bound keeps a thread for live
 * work, and at `ratePerSecond` at most. Writes nothing but the run (BacktestStore): no event, webhook, email, payment
 * action or user status. AI strategies run only when the job opts in, and stop at its `maxCalls`.
 */
export class BacktestRunner {
  constructor(private readonly options: BacktestRunnerOptions) {}

  /**
   * Runs the job to its end (succeeded, failed or cancelled), or throws BatchJobInterrupted when `shouldStop` says
   * the runner must let go, leaving the run for the next runner.
   */
  async run(jobId: string, shouldStop: () => boolean): Promise<void> {
    const { store, log, onJob } = this.options;
    await runBatchJob({ kind: 'backtest', store, log, onJob }, jobId, (job) => this.judgeAll(job, shouldStop));
  }

  private async judgeAll(job: BacktestJobDoc, shouldStop: () => boolean): Promise<'succeeded' | 'cancelled'> {
    const { store, engine, ratePerSecond, concurrency, batchSize } = this.options;
    if (await store.cancelRequested(job._id)) {
      await store.finish(job._id, 'cancelled');
      return 'cancelled';
    }
    const parsed = StoredRuleSet.safeParse({ rules: job.rules });
    if (!parsed.success) throw new Error('stored backtest rule set invalid');
    const full: RuleSet = parsed.data;
    const plain = withoutAi(full);
    const ai = { enabled: job.ai.enabled, calls: 0, recordsWithoutAi: 0 };
    const pacer = new Pacer(ratePerSecond, this.options.live);
    const { ids, truncated } = await store.select(job, () => pacer.selectionBatch());
    await store.progress(job._id, { selected: ids.length, processed: 0 });

    const tally = new BacktestTally(full.rules.map((rule) => rule.id));
    let processed = 0;
    for (let at = 0; at < ids.length; at += batchSize) {
      const batch = ids.slice(at, at + batchSize);
      for (let from = 0; from < batch.length; from += concurrency) {
        if (shouldStop()) throw new BatchJobInterrupted('runner stopping');
        const slice = batch.slice(from, from + concurrency);
        await pacer.turn(slice.length);
        await Promise.all(
          slice.map(async (recordId) => {
            const record = await store.record(job.tenantId, recordId);
            if (!record || record.deleted) return this.skip(tally, 'gone');
            if (record.passthrough || !record.content) return this.skip(tally, 'passthrough');
            const rules = this.rulesFor(job, full, plain, record.entity, ai);
            const candidate = await judge(engine, job.tenantId, record, rules);
            tally.add({
              recordId: record._id,
              userId: record.userId,
              current: record.status,
              manual: record.manual,
              candidate,
            });
            this.options.onRecord?.('judged');
          }),
        );
        processed += slice.length;
      }
      await store.progress(job._id, { processed });
      if (await store.cancelRequested(job._id)) {
        await store.finish(job._id, 'cancelled', { processed });
        return 'cancelled';
      }
    }

    const { settings } = await this.options.tenants.get(job.tenantId);
    const { moved, more } = tally.movedUsers();
    const users = await store.usersNow(job.tenantId, moved.keys());
    const result = tally.result({ truncated, threshold: settings.suspensionThreshold, users, usersMore: more, ai });
    await store.finish(job._id, 'succeeded', { result, processed });
    return 'succeeded';
  }

  private skip(tally: BacktestTally, why: 'gone' | 'passthrough'): void {
    tally.skip(why);
    this.options.onRecord?.(why);
  }

  /** The full rule set while the job's AI budget lasts (the calls are counted before they are made), else without AI. */
  private rulesFor(
    job: BacktestJobDoc,
    full: RuleSet,
    plain: RuleSet,
    entity: string,
    ai: { calls: number; recordsWithoutAi: number },
  ): RuleSet {
    const cost = aiCallsPerRecord(full, this.options.ai, entity);
    if (cost === 0) return plain;
    if (!job.ai.enabled || ai.calls + cost > job.ai.maxCalls) {
      if (job.ai.enabled) ai.recordsWithoutAi += 1;
      return plain;
    }
    ai.calls += cost;
    return full;
  }
}

async function judge(
  engine: ModerationEngine,
  tenantId: string,
  record: RecordState,
  rules: RuleSet,
): Promise<EngineResult> {
  const content = record.content!;
  return engine.moderate(
    {
      entity: record.entity,
      name: record.name ?? '',
      text: content.text,
      imageUrls: content.imageUrls ?? [],
      externalUrls: content.externalUrls ?? [],
      metadata: record.metadata,
      // A tenant of its own for the engine's fairness: live work of the same tenant keeps its share of threads.
      tenantId: `backtest:${tenantId}`,
      prior: record.manual && record.status ? { status: record.status, reason: record.manualReason } : undefined,
    },
    rules,
  );
}
