import { z } from 'zod';
import {
  BacktestResult,
  BacktestSelection,
  RetroactionCounts,
  RetroactionFailure,
  RetroactionStatus,
} from '@vigil/proto';
import { dataOf, listOf } from '../shared/paging.schema';

export const RetroactionView = z.object({
  id: z.string(),
  backtestId: z.string().meta({ description: 'The backtest it started from (its id was the confirmation).' }),
  version: z.number().int().meta({ description: 'The live rule set version applied; its moderations carry it.' }),
  status: RetroactionStatus.meta({
    description: 'queued, running, then succeeded, failed or cancelled. A stopped runner’s job is resumed.',
  }),
  error: RetroactionFailure.optional(),
  selection: BacktestSelection.extend({ createdBefore: z.string() }).meta({
    description: 'The backtest’s selection, read again by the runner.',
  }),
  ai: z.boolean().meta({ description: 'AI-provider strategies run: only when the backtest ran them on every record.' }),
  predicted: BacktestResult.pick({ judged: true, truncated: true, changes: true, users: true }).meta({
    description: 'What the backtest predicted: the effect confirmed by applying it.',
  }),
  progress: z.object({
    selected: z.number().int().nullable().meta({ description: 'Records selected; null until the runner read them.' }),
    processed: z.number().int(),
  }),
  counts: RetroactionCounts.meta({ description: 'What it did so far.' }),
  author: z.string(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
});
export const RetroactionData = dataOf(RetroactionView);
export const RetroactionList = listOf(RetroactionView);
