import { z } from 'zod';
import { LIMITS, RecordStatus, POLICY_ID } from '@vigil/proto';
import { dataOf, listOf, paging } from '../shared/paging.schema';

export const ListRecordsQuery = z.object({
  ...paging,
  clientId: z.string().min(1).max(LIMITS.clientId).optional(),
  entity: z.string().min(1).max(LIMITS.entity).optional(),
  status: RecordStatus.optional(),
  user: z.string().min(1).max(LIMITS.queryId).optional().meta({ description: 'User id (usr_…).' }),
});

export const ManualModerationBody = z.strictObject({
  status: RecordStatus,
  reason: z.string().min(1).max(LIMITS.reason),
  policy: z
    .string()
    .regex(POLICY_ID)
    .optional()
    .meta({ description: 'The policy the decision rests on (GET /api/v1/policies); the default policy when absent.' }),
});

export const RecordView = z.object({
  id: z.string(),
  clientId: z.string(),
  clientUrl: z.string().nullable(),
  name: z.string().nullable().meta({ description: 'Null for records moderated in passthrough mode.' }),
  entity: z.string(),
  protected: z.boolean(),
  metadata: z.record(z.string(), z.unknown()),
  moderationStatus: RecordStatus.nullable(),
  moderationStatusCreatedAt: z.string().nullable(),
  moderationStatusVia: z.string().nullable(),
  moderationPending: z.boolean(),
  reasons: z.array(z.string()),
  rules: z.array(z.string()),
  user: z.string().nullable(),
  passthrough: z.boolean(),
  openReportsCount: z.number().int().meta({ description: 'Reports on this record not decided yet.' }),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const RecordEventView = z.object({
  id: z.string(),
  type: z.string(),
  version: z.number(),
  occurredAt: z.string(),
  data: z.unknown(),
});

export const RecordList = listOf(RecordView);
export const RecordData = dataOf(RecordView);
export const RecordEvents = dataOf(z.array(RecordEventView));

/** The filters of `GET /records` and a bound on how many records one call re-runs. */
export const RerunModerationsBody = z.strictObject({
  clientId: ListRecordsQuery.shape.clientId,
  entity: ListRecordsQuery.shape.entity,
  status: ListRecordsQuery.shape.status,
  user: ListRecordsQuery.shape.user,
  limit: z
    .number()
    .int()
    .min(1)
    .max(LIMITS.rerunRecords)
    .default(100)
    .meta({
      description: `Records re-run at most, oldest first (at most ${LIMITS.rerunRecords}); \`has_more\` says whether others matched.`,
    }),
});

export const RerunModerationsResponse = z.object({
  message: z.literal('Accepted'),
  count: z.number().int().meta({ description: 'Records whose re-run was queued.' }),
  has_more: z.boolean(),
});
