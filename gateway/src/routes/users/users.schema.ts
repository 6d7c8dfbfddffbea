import { z } from 'zod';
import { EmailKind, LIMITS, PaymentAction, PaymentActionState, UserStatus, POLICY_ID } from '@vigil/proto';
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
  policy: z
    .string()
    .regex(POLICY_ID)
    .optional()
    .meta({ description: 'The policy the decision rests on (GET /api/v1/policies); the default policy when absent.' }),
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
  openReportsCount: z.number().int().meta({ description: 'Reports on this user not decided yet.' }),
  appealUrl: z
    .string()
    .nullable()
    .meta({ description: 'Signed, expiring link to the public appeal page while the user is Suspended or Banned.' }),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const UserList = listOf(UserView);
export const UserData = dataOf(UserView);

export const EmailLogQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  starting_after: paging.starting_after,
  ending_before: paging.ending_before,
});

/** One email to the user: what and when, never the address or the content. */
const EmailMessageView = z.object({
  id: z.string(),
  kind: EmailKind,
  status: z.enum(['pending', 'sending', 'sent', 'failed', 'skipped']),
  skipReason: z.string().nullable().meta({
    description:
      '`no_email`, or `expired` (no notifier with an SMTP relay sent it within a day), when skipped; `not_configured` on older entries.',
  }),
  attemptCount: z.number().int(),
  lastError: z.string().nullable(),
  sentAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const EmailMessageList = listOf(EmailMessageView);

export const PaymentActionLogQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  starting_after: paging.starting_after,
  ending_before: paging.ending_before,
});

/** One call to Stripe, or a check that stood in for one (`user_unavailable`, `key_unreadable`). */
const PaymentAttemptView = z.object({
  at: z.string(),
  durationMs: z.number().int(),
  statusCode: z.number().int().nullable().meta({ description: "HTTP status of Stripe's answer; null without one." }),
  error: z.string().nullable().meta({
    description:
      '`rate_limited`, `server_error`, `rejected`, `unauthorized`, `timeout`, `network_error`, `user_unavailable` or `key_unreadable`.',
  }),
  stripeRequestId: z.string().nullable(),
  stripeErrorType: z.string().nullable(),
  stripeErrorCode: z.string().nullable(),
  idempotencyKey: z.string().nullable(),
});

/** One payment action on the user's connected account: the audit trail of payment enforcement. */
export const PaymentActionView = z.object({
  id: z.string(),
  userId: z.string(),
  action: PaymentAction.meta({
    description: '`pause` (charges) on Suspended or Banned; `resume` (charges and payouts).',
  }),
  status: PaymentActionState.meta({
    description:
      '`pending` (due or retrying), `sending`, `succeeded`, `failed` (refused, or out of retries), `skipped` (see skipReason) or `superseded` (a later status change turned it around before it ran).',
  }),
  accountId: z.string().nullable(),
  skipReason: z
    .string()
    .nullable()
    .meta({ description: '`no_account`, `invalid_account_id`, `no_key` or `not_configured` when skipped.' }),
  attemptCount: z.number().int(),
  attempts: z.array(PaymentAttemptView),
  lastError: z.string().nullable(),
  stripeRequestId: z.string().nullable().meta({ description: "Stripe's request id of the call that succeeded." }),
  completedAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const PaymentActionList = listOf(PaymentActionView);
