// Original file: vigil/moderation/v1/moderation.proto

import type { User as _vigil_moderation_v1_User, User__Output as _vigil_moderation_v1_User__Output } from '../../../vigil/moderation/v1/User';

export interface ListUsersResponse {
  'users'?: (_vigil_moderation_v1_User)[];
  'hasMore'?: (boolean);
}

export interface ListUsersResponse__Output {
  'users': (_vigil_moderation_v1_User__Output)[];
  'hasMore': (boolean);
}
