import { z } from 'zod';
import { AppealStatus, LIMITS } from '@vigil/proto';
import { dataOf, listOf, paging } from '../shared/paging.schema';

export const ListAppealsQuery = z.object({
  limit: paging.limit,
  starting_after: paging.starting_after,
  status: AppealStatus.optional(),
  user: z.string().min(1).max(LIMITS.queryId).optional().meta({ description: 'User id (usr_…).' }),
});

export const AppealDecisionBody = z.strictObject({
  decision: z.enum(['Approved', 'Rejected']),
  reason: z.string().min(1).max(LIMITS.reason),
});

export const AppealView = z.object({
  id: z.string(),
  user: z.string(),
  status: AppealStatus,
  text: z.string(),
  decisionReason: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const AppealList = listOf(AppealView);
export const AppealData = dataOf(AppealView);
