import { z } from 'zod';
import { TdbSettings, TdbSubmissionState } from '@vigil/proto';
import { TdbToken } from './tdb-token';
import { listOf, paging } from '../shared/paging.schema';

/** Turns submission on, or changes it. */
export const TdbSettingsBody = z.strictObject({
  token: TdbToken.optional().meta({
    description:
      "The database's API token. Stored encrypted and never shown again; required the first time, kept when absent.",
  }),
  baseUrl: TdbSettings.shape.baseUrl.meta({
    description:
      'https URL; its host must resolve to public addresses, as webhook URLs must. Plain http only to an address in ' +
      'WEBHOOK_ALLOWED_CIDRS (a local stand-in).',
  }),
  territorialScope: TdbSettings.shape.territorialScope,
  defaults: TdbSettings.shape.defaults,
});

const Defaults = z.object({
  contentType: z.array(z.string()),
  contentTypeOther: z.string().optional(),
  contentLanguage: z.string().optional(),
  accountType: z.string().optional(),
});

export const TdbSettingsView = z.object({
  enabled: z.boolean().meta({ description: 'Statements of reasons are submitted.' }),
  token: z
    .string()
    .nullable()
    .meta({ description: 'The stored token as a hint (its last four characters), or null when off.' }),
  baseUrl: z.string().optional(),
  territorialScope: z.array(z.string()).optional(),
  defaults: Defaults.optional(),
  updatedAt: z.string().optional(),
});

export const TdbSubmissionQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  starting_after: paging.starting_after,
  subject: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,200}$/)
    .optional()
    .meta({ description: 'Only the statements of this record or user id.' }),
});

const AttemptView = z.object({
  at: z.string(),
  durationMs: z.number().int(),
  batchSize: z.number().int().meta({ description: 'Statements the call carried.' }),
  statusCode: z.number().int().nullable(),
  error: z
    .string()
    .nullable()
    .meta({
      description:
        '`rejected`, `duplicate` (stored by an earlier call), `batch_refused` (another statement of the call was ' +
        'refused), `unauthorized`, `rate_limited`, `server_error`, `unexpected_status`, `timeout`, `network_error`, ' +
        '`ssrf_refused`, `token_unreadable`, `processing_failed` (an answer that could not be processed); null on ' +
        'success.',
    }),
});

const TdbSubmissionView = z.object({
  id: z.string(),
  statementId: z.string().meta({ description: 'The statement of reasons (`sor_…`); its event id is the `puid`.' }),
  eventId: z.string(),
  subject: z.object({ type: z.enum(['record', 'user']), id: z.string() }),
  status: TdbSubmissionState,
  skipReason: z.string().nullable(),
  tdbUuid: z.string().nullable().meta({ description: "The database's id of the stored statement." }),
  alreadyStored: z.boolean().meta({ description: 'The database had it from a call whose answer was lost.' }),
  rejection: z
    .record(z.string(), z.array(z.string()))
    .nullable()
    .meta({ description: "The database's refusal, by field." }),
  statement: z.record(z.string(), z.unknown()).meta({ description: 'Exactly what is sent: no personal data.' }),
  attemptCount: z.number().int(),
  attempts: z.array(AttemptView),
  createdAt: z.string(),
  submittedAt: z.string().nullable(),
});
export const TdbSubmissionList = listOf(TdbSubmissionView);
