import { z } from 'zod';
import { RecordStatus } from '@vigil/proto';

export { ModerateBody } from '../shared/record.schema';

export const ModerateResponse = z.object({
  id: z.string().meta({ description: 'Record id (rec_…), derived from the clientId.' }),
  status: RecordStatus,
  moderation: z.string().meta({ description: 'Moderation id.' }),
  user: z.string().optional().meta({ description: 'User id (usr_…), when a user was sent.' }),
  flagged: z.boolean(),
  reasons: z.array(z.string()),
  rules: z.array(z.string()).meta({ description: 'Ids of the rules that flagged.' }),
  testMode: z.boolean().meta({
    description: 'The tenant is in test mode: the result is stored, but no webhook or user action follows.',
  }),
  ruleSetVersion: z.number().int().nonnegative().meta({
    description: 'The rule set version that judged it (`GET /api/v1/rules/versions/{n}`); 0 for the default rule set.',
  }),
  maskedContent: z
    .string()
    .optional()
    .meta({
      description:
        'The content with each contact detail replaced by `[contact removed]`, when a `pii` strategy with `mask: true` ' +
        "found some in the text (docs/engine.md). A kept record's webhook carries it too (docs/webhooks.md); a " +
        "passthrough record's is answered only, never stored. Absent when the call repeats an applied one.",
    }),
  message: z.literal('Success'),
});
