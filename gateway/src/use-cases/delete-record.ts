import { recordIdFor } from '@vigil/proto';
import type { Caller, UseCaseDeps } from './deps';
import { sendIngestCommand, type IngestDeps } from './send-ingest-command';

/** Queues a record's deletion (`DeleteRecord`) by its clientId; 404 when no live record has it. Returns its id. */
export async function deleteRecord(
  deps: IngestDeps & Pick<UseCaseDeps, 'moderator'>,
  caller: Caller,
  input: { clientId: string },
): Promise<string> {
  const { tenantId } = caller;
  const recordId = recordIdFor(tenantId, input.clientId);
  // The delete itself stays a Kafka command (ordered after the record's ingests, applied once), but whether the
  // record exists is asked first, as Iffy answers 404 for an unknown clientId. GetRecord hides deleted records, so
  // a second DELETE answers 404 (Iffy answered 200 again and decremented the user's count twice). Between the
  // check and the command the record may be deleted by another request: the moderator then applies a no-op.
  await deps.moderator.call('getRecord', { tenantId, recordId }, { requestId: caller.requestId });
  await sendIngestCommand(deps, caller, `${tenantId}:${input.clientId}`, (base) => ({
    ...base,
    type: 'DeleteRecord',
    data: { clientId: input.clientId },
  }));
  return recordId;
}
