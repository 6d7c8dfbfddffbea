import { z } from 'zod';
import { BacktestAi, BacktestFailure, BacktestResult, BacktestSelection, BacktestStatus } from '@vigil/proto';
import { dataOf, listOf } from '../shared/paging.schema';

/** A backtest: which version, which records (GET /records' filters, a time range, a bound), and AI opt-in. */
export const CreateBacktestBody = BacktestSelection.extend({
  version: z
    .number()
    .int()
    .nonnegative()
    .max(999_999_999)
    .meta({ description: 'The rule set version to run: a draft or any other (0: the default set).' }),
  // The bounds are the deployment's (BACKTEST_MAX_*), checked by the use case: past them is 422 backtest_too_large
  // with `details.limit`, not a malformed body, whatever the value.
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .meta({
      description:
        'Records judged at most, oldest first: 1000 by default (or the deployment’s bound if lower). Over ' +
        'BACKTEST_MAX_RECORDS: 422 backtest_too_large.',
    }),
  ai: BacktestAi.extend({
    maxCalls: z
      .number()
      .int()
      .min(1)
      .default(100)
      .meta({
        description:
          'Provider and LLM calls at most; records past it are judged without AI strategies. Over ' +
          'BACKTEST_MAX_AI_CALLS: 422 backtest_too_large.',
      }),
  })
    .optional()
    .meta({
      description:
        'AI-provider strategies (moderation API, prompts) run only when enabled, and at most `maxCalls` calls.',
    }),
});

export const BacktestView = z.object({
  id: z.string(),
  version: z.number().int(),
  status: BacktestStatus.meta({
    description: 'queued, running, then succeeded, failed or cancelled (a runner silent for 2 minutes: failed).',
  }),
  error: BacktestFailure.optional(),
  selection: BacktestSelection.extend({ createdBefore: z.string() }),
  ai: BacktestAi,
  progress: z.object({
    selected: z.number().int().nullable().meta({ description: 'Records selected; null until the runner read them.' }),
    processed: z.number().int(),
  }),
  author: z.string(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  expiresAt: z.string().meta({ description: 'The job and its result are forgotten then (404).' }),
  result: BacktestResult.nullable().meta({ description: 'Once succeeded; absent from lists.' }),
});
export const BacktestData = dataOf(BacktestView);
export const BacktestList = listOf(BacktestView.omit({ result: true }));
