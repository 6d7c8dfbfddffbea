import type { RpcResponse } from '../grpc/moderator-client';
import type { Caller, UseCaseDeps } from './deps';

/**
 * Files the reporter's complaint about a decision not to act on their report (Art. 20 DSA), once per report. The API
 * files it for a tenant's key, the complaint page for the report its signed link names.
 */
export function fileComplaint(
  deps: Pick<UseCaseDeps, 'moderator'>,
  caller: Caller,
  reportId: string,
  text: string,
): Promise<RpcResponse<'fileReportComplaint'>> {
  return deps.moderator.call(
    'fileReportComplaint',
    { tenantId: caller.tenantId, reportId, text },
    { requestId: caller.requestId },
  );
}
