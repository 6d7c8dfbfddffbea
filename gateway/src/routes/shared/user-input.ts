import type { ModerationServiceClient } from '@vigil/proto';
import type { UserInput } from './record.schema';

type GrpcUserInput = NonNullable<Parameters<ModerationServiceClient['moderate']>[0]['user']>;

export function toGrpcUser(user: UserInput): GrpcUserInput {
  return {
    clientId: user.clientId,
    clientUrl: user.clientUrl,
    paymentsAccountId: user.paymentsAccountId,
    email: user.email,
    name: user.name,
    username: user.username,
    protected: user.protected,
    metadataJson: user.metadata === undefined ? undefined : JSON.stringify(user.metadata),
  };
}
