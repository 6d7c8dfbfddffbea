import { z } from 'zod';
import { RecordStatus } from './events';
import { LIMITS } from './limits';

/**
 * Backtests: a rule set version run over a tenant's stored records without acting. The gateway writes the job
 * (`COLLECTIONS.backtests`) and sends a StartBacktest command on the `backtests` topic; a moderator runs it and writes
 * its run (`COLLECTIONS.backtestRuns`: status, progress, result). Two collections, one writer each: an update on
 * FerretDB v1 rewrites the whole document, so a cancel written beside a progress write could be lost.
 */
export const BACKTEST_LIMITS = {
  /** Records one backtest judges at most (the deployment may set a lower bound). */
  records: 100_000,
  /** AI-provider calls (moderation API and LLM prompts) one backtest may make at most, when it opts in. */
  aiCalls: 10_000,
  /** Example records kept per rule, and per direction of status change. */
  examples: 10,
  /** Reasons kept per example. */
  exampleReasons: 5,
  /** Users whose flagged count a backtest looks up, and users listed per direction (suspended, reinstated). */
  usersLookedUp: 1000,
  usersListed: 100,
  /** A run whose runner has not written for this long is lost: failed, and never resumed. */
  stallMs: 120_000,
  /** A job started this many times (its runner died or left each time) is failed rather than started again. */
  attempts: 5,
} as const;

/** The selection: the filters of `GET /api/v1/records`, a time range on creation, and a bound on count. */
export const BacktestSelection = z.strictObject({
  clientId: z.string().min(1).max(LIMITS.clientId).optional(),
  entity: z.string().min(1).max(LIMITS.entity).optional(),
  status: RecordStatus.optional(),
  user: z.string().min(1).max(LIMITS.queryId).optional().meta({ description: 'User id (usr_…).' }),
  createdAfter: z.iso
    .datetime({ offset: true })
    .optional()
    .meta({ description: 'Records created at or after this instant (ISO 8601).' }),
  createdBefore: z.iso
    .datetime({ offset: true })
    .optional()
    .meta({ description: 'Records created before this instant; the job’s creation time when absent.' }),
  limit: z
    .number()
    .int()
    .min(1)
    .max(BACKTEST_LIMITS.records)
    .default(1000)
    .meta({ description: `Records judged at most, oldest first (at most ${BACKTEST_LIMITS.records}).` }),
});
export type BacktestSelection = z.infer<typeof BacktestSelection>;

/** AI-provider strategies cost money: skipped unless asked for, and bounded per job when asked for. */
export const BacktestAi = z.strictObject({
  enabled: z.boolean().default(false),
  maxCalls: z
    .number()
    .int()
    .min(1)
    .max(BACKTEST_LIMITS.aiCalls)
    .default(100)
    .meta({ description: 'Provider and LLM calls at most; records past it are judged without AI strategies.' }),
});
export type BacktestAi = z.infer<typeof BacktestAi>;

export const BacktestStatus = z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']);
export type BacktestStatus = z.infer<typeof BacktestStatus>;
export const TERMINAL_BACKTEST_STATUSES: readonly BacktestStatus[] = ['succeeded', 'failed', 'cancelled'];

/** Why a backtest failed (stable codes). */
export const BacktestFailure = z.enum(['runner_lost', 'too_many_attempts', 'store_error', 'engine_error']);
export type BacktestFailure = z.infer<typeof BacktestFailure>;

const Example = z.object({ recordId: z.string(), reasons: z.array(z.string()) });

export const BacktestResult = z.object({
  judged: z.number().int().meta({ description: 'Records the candidate rule set judged.' }),
  skipped: z.object({
    passthrough: z.number().int().meta({ description: 'Passthrough records: no stored content to judge.' }),
    gone: z.number().int().meta({ description: 'Records deleted or gone since the selection was read.' }),
  }),
  truncated: z.boolean().meta({ description: 'More records matched than `limit`: the oldest ones were judged.' }),
  changes: z.object({
    toFlagged: z.number().int().meta({ description: 'Compliant (or never judged) records that would be Flagged.' }),
    toCompliant: z.number().int().meta({ description: 'Flagged records that would be Compliant.' }),
    heldByHumans: z
      .number()
      .int()
      .meta({ description: 'Records whose candidate status differs from a human decision, which stays.' }),
    toFlaggedExamples: z.array(Example),
    toCompliantExamples: z.array(Example),
  }),
  rules: z
    .array(
      z.object({
        ruleId: z.string(),
        flags: z.number().int().meta({ description: 'Records this rule would flag.' }),
        examples: z.array(Example),
        humanConfirmed: z.number().int().meta({ description: 'Of its flags, records a human decided Flagged.' }),
        humanOverturned: z.number().int().meta({ description: 'Of its flags, records a human decided Compliant.' }),
      }),
    )
    .meta({ description: 'Per rule of the candidate set, in its order.' }),
  users: z.object({
    threshold: z.number().int().meta({ description: 'The suspension threshold the users were measured against.' }),
    wouldSuspend: z.array(z.string()).meta({ description: 'Users who would reach the threshold (at most 100).' }),
    wouldReinstate: z.array(z.string()).meta({ description: 'Suspended users who would drop below it (at most 100).' }),
    truncated: z.boolean().meta({ description: 'More users moved than were looked up or listed.' }),
  }),
  humans: z.object({
    reviewed: z.number().int().meta({ description: 'Judged records whose status a human decided.' }),
    agree: z.number().int(),
    disagree: z.number().int(),
  }),
  ai: z.object({
    enabled: z.boolean(),
    calls: z.number().int().meta({ description: 'Provider and LLM calls made.' }),
    recordsWithoutAi: z
      .number()
      .int()
      .meta({ description: 'Records judged without AI strategies once `maxCalls` was spent.' }),
  }),
});
export type BacktestResult = z.infer<typeof BacktestResult>;

/** The job as the gateway stores it (`COLLECTIONS.backtests`, `_id`: `bt_<ulid>`). */
export interface BacktestJobDoc {
  _id: string;
  tenantId: string;
  /** The rule set version judged, and its rules as read when the job was created. */
  version: number;
  rules: unknown[];
  selection: BacktestSelection & { createdBefore: string };
  ai: BacktestAi;
  author: string;
  createdAt: Date;
  /** The job and its result are forgotten after this instant. */
  expiresAt: Date;
  /** Set by a cancel request; the runner stops at its next batch. */
  cancelRequestedAt?: Date;
}

/** The run as a moderator writes it (`COLLECTIONS.backtestRuns`, `_id`: the job id). */
export interface BacktestRunDoc {
  _id: string;
  tenantId: string;
  status: Exclude<BacktestStatus, 'queued'>;
  /** Times a runner started the job. */
  attempts: number;
  /** Records selected (known once the selection is read) and judged so far. */
  selected?: number;
  processed: number;
  startedAt: Date;
  heartbeatAt: Date;
  finishedAt?: Date;
  /** The job's: the run is forgotten with it. */
  expiresAt: Date;
  error?: BacktestFailure;
  result?: BacktestResult;
}

/** The command on the `backtests` topic. Key: the tenant, so that one tenant's jobs run one after another. */
export const StartBacktest = z.object({
  type: z.literal('StartBacktest'),
  id: z.string(),
  tenantId: z.string(),
  jobId: z.string(),
  issuedAt: z.string(),
});
export type StartBacktest = z.infer<typeof StartBacktest>;
