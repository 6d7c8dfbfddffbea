import { recordIdFor, ulid, userIdFor } from '@vigil/proto';
import { inRollout } from '../domain/rollout';
import type { IngestBody } from '../routes/shared/record.schema';
import type { Caller, UseCaseDeps } from './deps';
import { sendIngestCommand, type IngestDeps } from './send-ingest-command';

export interface IngestAccepted {
  recordId: string;
  /** The moderation the command schedules; null when the tenant's roll-out skipped the record. */
  moderationId: string | null;
  userId?: string;
}

/** Queues a record's create or update for the moderator (`IngestRecord`); resolves once Kafka has it. */
export async function ingestRecord(
  deps: IngestDeps & Pick<UseCaseDeps, 'configStore'>,
  caller: Caller,
  input: IngestBody,
): Promise<IngestAccepted> {
  const { tenantId } = caller;
  const { rolloutPercentage } = await deps.configStore.cachedSettings(tenantId);
  // Decided here, so the answer can name the moderation as Iffy's does, and carried in the command, so every
  // re-delivery agrees; the moderator still moderates a skipped record that is Flagged or whose user is Suspended.
  const moderationId = inRollout(tenantId, input.clientId, rolloutPercentage) ? `mod_${ulid()}` : null;
  await sendIngestCommand(deps, caller, `${tenantId}:${input.clientId}`, (base) => ({
    ...base,
    type: 'IngestRecord',
    data: input,
    moderationId,
  }));
  return {
    recordId: recordIdFor(tenantId, input.clientId),
    moderationId,
    ...(input.user ? { userId: userIdFor(tenantId, input.user.clientId) } : {}),
  };
}
