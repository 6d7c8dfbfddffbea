import type { RpcResponse } from '../grpc/moderator-client';
import type { Caller, UseCaseDeps } from './deps';

/**
 * Files an appeal of a suspended or banned user, once per decision (the moderator refuses another with 409). The API
 * files it for a tenant's key, the appeal page for the user its signed link names.
 */
export function fileAppeal(
  deps: Pick<UseCaseDeps, 'moderator'>,
  caller: Caller,
  userId: string,
  text: string,
): Promise<RpcResponse<'createAppeal'>> {
  return deps.moderator.call(
    'createAppeal',
    { tenantId: caller.tenantId, userId, text },
    { requestId: caller.requestId },
  );
}
