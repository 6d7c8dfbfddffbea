import { z } from 'zod';
import type { BacktestResult, BacktestSelection } from './backtests';

/**
 * Retroactions: the live rule set version applied to past records, starting from a finished backtest of that version
 * (docs/rules-safely.md, "Apply"). The gateway writes the job (`COLLECTIONS.retroactions`) and sends a
 * StartRetroaction command on the `backtests` topic; a moderator runs it through the re-run's moderation path and
 * writes its run (`COLLECTIONS.retroactionRuns`) and the ids it selected (`COLLECTIONS.retroactionItems`). One writer
 * per collection, as for backtests.
 */
export const RETROACTION_LIMITS = {
  /** Record ids per stored chunk of a run's selection (a chunk is read whole when the run reaches it). */
  chunk: 1000,
  /** A job started this many times (its runner died or left each time) is failed rather than started again. */
  attempts: 10,
  /** Retroactions listed at most, newest first. */
  listed: 50,
} as const;

export const RetroactionStatus = z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']);
export type RetroactionStatus = z.infer<typeof RetroactionStatus>;
export const TERMINAL_RETROACTION_STATUSES: readonly RetroactionStatus[] = ['succeeded', 'failed', 'cancelled'];

/** Why a retroaction failed (stable codes). */
export const RetroactionFailure = z.enum(['version_replaced', 'too_many_attempts', 'store_error', 'engine_error']);
export type RetroactionFailure = z.infer<typeof RetroactionFailure>;

/** What a retroaction did so far: records changed each way, and those it left. */
export const RetroactionCounts = z.object({
  toFlagged: z
    .number()
    .int()
    .meta({ description: 'Records it moderated from Compliant (or never judged) to Flagged.' }),
  toCompliant: z.number().int().meta({ description: 'Records it moderated from Flagged to Compliant.' }),
  unchanged: z.number().int().meta({ description: 'Records the live version judges as they stand: nothing written.' }),
  heldByHumans: z.number().int().meta({ description: 'Records a human decided: left as they are, nothing written.' }),
  skipped: z.number().int().meta({ description: 'Records gone, deleted or passthrough since the backtest.' }),
});
export type RetroactionCounts = z.infer<typeof RetroactionCounts>;

/** The backtest's prediction, copied into the job when it is created: the backtest may expire before it ends. */
type RetroactionPrediction = Pick<BacktestResult, 'judged' | 'truncated' | 'changes' | 'users'>;

/** The job as the gateway stores it (`COLLECTIONS.retroactions`, `_id`: `ra_<ulid>`). */
export interface RetroactionJobDoc {
  _id: string;
  tenantId: string;
  /** The backtest it starts from, and that backtest's version (live when the job was created). */
  backtestId: string;
  version: number;
  /** The backtest's selection (with its fixed end), read again by the runner. */
  selection: BacktestSelection & { createdBefore: string };
  /** Whether AI-provider strategies run: only when the backtest ran them on every record it judged. */
  ai: boolean;
  predicted: RetroactionPrediction;
  author: string;
  createdAt: Date;
  /** Set by a cancel request; the runner stops at its next batch. */
  cancelRequestedAt?: Date;
}

/** The run as a moderator writes it (`COLLECTIONS.retroactionRuns`, `_id`: the job id). */
export interface RetroactionRunDoc {
  _id: string;
  tenantId: string;
  status: Exclude<RetroactionStatus, 'queued'>;
  /** Times a runner started or resumed the job. */
  attempts: number;
  /** Records selected (known once the selection is stored) and gone through so far: where a resumed run goes on. */
  selected?: number;
  processed: number;
  counts: RetroactionCounts;
  startedAt: Date;
  heartbeatAt: Date;
  finishedAt?: Date;
  error?: RetroactionFailure;
}

/** The command on the `backtests` topic (key: the tenant), beside StartBacktest. */
export const StartRetroaction = z.object({
  type: z.literal('StartRetroaction'),
  id: z.string(),
  tenantId: z.string(),
  jobId: z.string(),
  issuedAt: z.string(),
  /**
   * The tenant's configuration version the gateway knew (the promotion included): the moderator reads the tenant's
   * rules afresh when its cache is older, so the version just promoted is the live one it checks against.
   */
  configVersion: z.number().int().nonnegative().optional(),
});
export type StartRetroaction = z.infer<typeof StartRetroaction>;
