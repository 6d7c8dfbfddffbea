import { userIdFor } from '@vigil/proto';
import type { UserBody } from '../routes/shared/record.schema';
import type { z } from 'zod';
import type { Caller } from './deps';
import { sendIngestCommand, type IngestDeps } from './send-ingest-command';

/** Queues a user's create or update alone (`IngestUser`); resolves with the user's id once Kafka has it. */
export async function ingestUser(deps: IngestDeps, caller: Caller, input: z.output<typeof UserBody>): Promise<string> {
  const { tenantId } = caller;
  await sendIngestCommand(deps, caller, `${tenantId}:user:${input.clientId}`, (base) => ({
    ...base,
    type: 'IngestUser',
    data: input,
  }));
  return userIdFor(tenantId, input.clientId);
}
