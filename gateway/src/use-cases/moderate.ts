import { ulid } from '@vigil/proto';
import type { RpcResponse } from '../grpc/moderator-client';
import type { ModerateBody } from '../routes/shared/record.schema';
import { toGrpcUser } from '../routes/shared/user-input';
import type { Caller, UseCaseDeps } from './deps';

/** Moderates a record now through the moderator's `Moderate` RPC (with its deadline), and returns its result. */
export function moderate(
  deps: Pick<UseCaseDeps, 'moderator'>,
  caller: Caller,
  input: ModerateBody,
): Promise<RpcResponse<'moderate'>> {
  return deps.moderator.call(
    'moderate',
    {
      tenantId: caller.tenantId,
      clientId: input.clientId,
      clientUrl: input.clientUrl,
      name: input.name,
      entity: input.entity,
      content: input.content,
      metadataJson: input.metadata === undefined ? undefined : JSON.stringify(input.metadata),
      user: input.user ? toGrpcUser(input.user) : undefined,
      passthrough: input.passthrough ?? false,
      requestId: caller.requestId,
      // One per request: the moderator applies it once, so the client may send the call again to another
      // moderator when the first went away mid-call.
      moderationId: `mod_${ulid()}`,
    },
    { requestId: caller.requestId },
  );
}
