import { z } from 'zod';
import { EmailKind, LIMITS, UserStatus } from '@vigil/proto';
import { dataOf, listOf, paging } from '../shared/paging.schema';

export const ListUsersQuery = z.object({
  ...paging,
  clientId: z.string().min(1).max(LIMITS.clientId).optional(),
  email: z.string().min(1).max(LIMITS.queryEmail).optional(),
  status: UserStatus.optional(),
});

export const UserStatusBody = z.strictObject({
  status: UserStatus,
  reason: z.string().min(1).max(LIMITS.reason),
});

export const CreateAppealBody = z.strictObject({ text: z.string().min(1).max(LIMITS.appealText) });

export const UserView = z.object({
  id: z.string(),
  clientId: z.string(),
  clientUrl: z.string().nullable(),
  email: z.string().nullable(),
  name: z.string().nullable(),
  username: z.string().nullable(),
  protected: z.boolean(),
  metadata: z.record(z.string(), z.unknown()),
  actionStatus: UserStatus.nullable(),
  actionStatusCreatedAt: z.string().nullable(),
  actionStatusVia: z.string().nullable(),
  flaggedRecordsCount: z.number().int(),
  appealUrl: z
    .string()
    .nullable()
    .meta({ description: 'Signed, expiring link to the public appeal page while the user is Suspended or Banned.' }),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const UserList = listOf(UserView);
export const UserData = dataOf(UserView);

export const EmailLogQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) });

/** One email to the user: what and when, never the address or the content. */
export const EmailMessageView = z.object({
  id: z.string(),
  kind: EmailKind,
  status: z.enum(['pending', 'sending', 'sent', 'failed', 'skipped']),
  skipReason: z.string().nullable().meta({ description: '`no_email` or `not_configured` when skipped.' }),
  attemptCount: z.number().int(),
  lastError: z.string().nullable(),
  sentAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const EmailMessageList = listOf(EmailMessageView);
