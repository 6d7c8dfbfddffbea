import type { RpcRequest, RpcResponse } from '../grpc/moderator-client';
import type { Caller, UseCaseDeps } from './deps';

/** A person's decision: the caller, and how the decision names them (an API key or a console member, never a name). */
export interface Decider extends Caller {
  actor: string;
}

/** The field of each decision's request that names what is decided on. */
const DECIDED = {
  moderateRecordManually: 'recordId',
  setUserStatus: 'userId',
  decideAppeal: 'appealId',
  decideReport: 'reportId',
  decideReportComplaint: 'reportId',
} as const;
export type Decision = keyof typeof DECIDED;

/**
 * A human decision on a record, user, appeal or report, made through the moderator (which keeps it sticky: automation
 * never overrides it). The API's routes and the console's pages both decide through here.
 */
export function decide<K extends Decision>(
  deps: Pick<UseCaseDeps, 'moderator'>,
  decider: Decider,
  method: K,
  id: string,
  decision: Omit<RpcRequest<K>, 'tenantId' | 'actor' | (typeof DECIDED)[K]>,
): Promise<RpcResponse<K>> {
  const request = { ...decision, [DECIDED[method]]: id, tenantId: decider.tenantId, actor: decider.actor };
  return deps.moderator.call(method, request, { requestId: decider.requestId });
}
