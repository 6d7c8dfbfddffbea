import { COLLECTIONS, dayOf } from '@vigil/proto';
import { type ShadowVerdictDoc } from '../precision/shadow-verdicts';
import { type RuleSet } from '@vigil/proto/rules';
import type { Collection, Db } from 'mongodb';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { EngineInput, ModerationEngine } from '../engine';
import { shadowRunCounts } from '../precision/precision-counts';
import type { RulePrecision } from '../precision/rule-precision';
import { guarded } from '../store/mongo-errors';

export interface ShadowJob {
  tenantId: string;
  recordId: string;
  ruleSetVersion: number;
  /** The live set's shadow rules, if any. */
  shadow: RuleSet | null;
  /** The tenant's shadow version (a whole rule set version run in shadow), if any. */
  version?: { ruleSetVersion: number; shadow: RuleSet };
  input: Omit<EngineInput, 'deadline' | 'prior' | 'imageUrls'>;
  /** The live moderation's outcome flagged the record. */
  liveFlagged: boolean;
}

/**
 * Shadow judgements in flight per tenant and in all, per moderator process, and the time each may take (ms). Low on
 * purpose: a tenant's shadow rules sample its traffic under load rather than compete with its live moderations.
 */
export const SHADOW_BOUNDS = { perTenant: 1, total: 4, budgetMs: 2000 } as const;

export interface ShadowRunnerOptions {
  engine: ModerationEngine;
  db: Db;
  precision: RulePrecision;
  log: Logger;
  registry?: Registry;
  /** Shadow judgements in flight per tenant at most; more are skipped (counted), never queued. */
  perTenant: number;
  /** In flight in all at most. */
  total: number;
  /** Time one shadow judgement may take, milliseconds. */
  budgetMs: number;
}

/**
 * Runs a tenant's shadow rules on a record after its live moderation was committed, off the live path: the caller
 * does not wait. Bounded per tenant and in all; a judgement over the bound is skipped, so shadow work never queues
 * behind or ahead of live work. Stores the verdict (rule ids only, for a passthrough record too) and counts it.
 */
export class ShadowRunner {
  private readonly verdicts: Collection<ShadowVerdictDoc>;
  private readonly inFlight = new Map<string, number>();
  private total = 0;
  private readonly running = new Set<Promise<void>>();
  private readonly jobs?: Counter<'outcome'>;
  private readonly verdictCounts?: Counter<'live'>;
  private readonly versionVerdictCounts?: Counter<'live'>;

  constructor(private readonly options: ShadowRunnerOptions) {
    this.verdicts = options.db.collection(COLLECTIONS.shadowVerdicts);
    if (options.registry) {
      this.jobs = new Counter({
        name: 'moderator_shadow_judgements_total',
        help: "Shadow rule judgements of records by outcome ('done', 'skipped' over the bound, 'failed')",
        labelNames: ['outcome'],
        registers: [options.registry],
      });
      this.verdictCounts = new Counter({
        name: 'moderator_shadow_rule_verdicts_total',
        help: "Shadow rule verdicts by agreement with the live result ('agree', 'disagree')",
        labelNames: ['live'],
        registers: [options.registry],
      });
      this.versionVerdictCounts = new Counter({
        name: 'moderator_shadow_version_rule_verdicts_total',
        help: "Verdicts of the rules of shadow versions by agreement with the live result ('agree', 'disagree')",
        labelNames: ['live'],
        registers: [options.registry],
      });
    }
  }

  /** Starts the job unless the tenant or the process is at its bound. */
  offer(job: ShadowJob): void {
    const tenantCount = this.inFlight.get(job.tenantId) ?? 0;
    if (tenantCount >= this.options.perTenant || this.total >= this.options.total) {
      this.jobs?.inc({ outcome: 'skipped' });
      return;
    }
    this.inFlight.set(job.tenantId, tenantCount + 1);
    this.total += 1;
    const running: Promise<void> = this.run(job)
      .then(
        () => this.jobs?.inc({ outcome: 'done' }),
        (err: unknown) => {
          this.jobs?.inc({ outcome: 'failed' });
          this.options.log.warn({ err, tenantId: job.tenantId }, 'shadow judgement failed');
        },
      )
      .finally(() => {
        const left = (this.inFlight.get(job.tenantId) ?? 1) - 1;
        if (left > 0) this.inFlight.set(job.tenantId, left);
        else this.inFlight.delete(job.tenantId);
        this.total -= 1;
        this.running.delete(running);
      });
    this.running.add(running);
  }

  /** The last shadow verdict of a record (one read by `_id`). */
  verdictOf(recordId: string): Promise<ShadowVerdictDoc | null> {
    return guarded(() => this.verdicts.findOne({ _id: recordId }));
  }

  /** Waits for the judgements in flight (shutdown). */
  async drain(): Promise<void> {
    await Promise.all([...this.running]);
  }

  /** The live set's shadow rules, then the shadow version's rules, within one budget: one slot of the bound. */
  private async run(job: ShadowJob): Promise<void> {
    const started = Date.now();
    const deadline = started + this.options.budgetMs;
    const signal = AbortSignal.timeout(this.options.budgetMs);
    const rules = job.shadow && (await this.judge(job, job.shadow, deadline, signal));
    const version = job.version && (await this.judge(job, job.version.shadow, deadline, signal));
    if (!rules && !version) return;
    const verdict: ShadowVerdictDoc = {
      _id: job.recordId,
      tenantId: job.tenantId,
      ruleSetVersion: job.ruleSetVersion,
      ran: rules?.ran ?? [],
      flagged: rules?.flagged ?? [],
      at: new Date(started),
      ...(version && job.version ? { version: { ruleSetVersion: job.version.ruleSetVersion, ...version } } : {}),
    };
    await guarded(() => this.verdicts.replaceOne({ _id: verdict._id }, verdict, { upsert: true }));
    const day = dayOf(verdict.at);
    const counts = shadowRunCounts(verdict, job.liveFlagged, day);
    const versionCounts = verdict.version
      ? shadowRunCounts({ ...verdict.version, tenantId: job.tenantId }, job.liveFlagged, day)
      : [];
    await this.options.precision.countShadow([...counts, ...versionCounts]);
    for (const { counts: each } of counts) this.verdictCounts?.inc({ live: each.agreeLive ? 'agree' : 'disagree' });
    for (const { counts: each } of versionCounts)
      this.versionVerdictCounts?.inc({ live: each.agreeLive ? 'agree' : 'disagree' });
  }

  /** The rules of `shadow` that apply to the record's entity, and those that flagged it; null when none applies. */
  private async judge(
    job: ShadowJob,
    shadow: RuleSet,
    deadline: number,
    signal: AbortSignal,
  ): Promise<{ ran: string[]; flagged: string[] } | null> {
    const ran = shadow.rules
      .filter((rule) => rule.entities.length === 0 || rule.entities.includes(job.input.entity))
      .map((rule) => rule.id);
    if (ran.length === 0) return null;
    const result = await this.options.engine.moderate({ ...job.input, imageUrls: [], deadline }, shadow, signal);
    return { ran, flagged: result.rules };
  }
}
