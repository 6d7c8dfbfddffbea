import { z } from 'zod';

export { DeleteIngestBody, IngestBody } from '../shared/record.schema';
export { UserBody } from '../shared/record.schema';

export const AcceptedResponse = z.object({
  message: z.literal('Accepted'),
  id: z.string().meta({ description: 'Record id (rec_…) or, for /ingest/user, user id (usr_…).' }),
  user: z.string().optional().meta({ description: 'User id (usr_…), when a user was sent.' }),
});
