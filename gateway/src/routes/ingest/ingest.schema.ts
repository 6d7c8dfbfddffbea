import { z } from 'zod';

export { DeleteIngestBody, IngestBody } from '../shared/record.schema';
export { UserBody } from '../shared/record.schema';

export const AcceptedResponse = z.object({
  message: z.literal('Accepted'),
  id: z.string().meta({ description: 'Record id (rec_…) or, for /ingest/user, user id (usr_…).' }),
  user: z.string().optional().meta({ description: 'User id (usr_…), when a user was sent.' }),
});

export const IngestAcceptedResponse = AcceptedResponse.extend({
  moderation: z
    .string()
    .nullable()
    .meta({
      description:
        'Id of the moderation the ingest scheduled (mod_…), or null when the roll-out sampling skipped the record: it is ' +
        'stored and moderated only if it is Flagged or its user Suspended (Iffy §4.8).',
    }),
});
