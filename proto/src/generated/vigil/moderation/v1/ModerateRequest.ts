// Original file: vigil/moderation/v1/moderation.proto

import type { Content as _vigil_moderation_v1_Content, Content__Output as _vigil_moderation_v1_Content__Output } from '../../../vigil/moderation/v1/Content';
import type { UserInput as _vigil_moderation_v1_UserInput, UserInput__Output as _vigil_moderation_v1_UserInput__Output } from '../../../vigil/moderation/v1/UserInput';

export interface ModerateRequest {
  'tenantId'?: (string);
  'clientId'?: (string);
  'clientUrl'?: (string);
  'name'?: (string);
  'entity'?: (string);
  'content'?: (_vigil_moderation_v1_Content | null);
  'metadataJson'?: (string);
  'user'?: (_vigil_moderation_v1_UserInput | null);
  'passthrough'?: (boolean);
  'requestId'?: (string);
  'moderationId'?: (string);
  '_clientUrl'?: "clientUrl";
  '_metadataJson'?: "metadataJson";
  '_user'?: "user";
  '_moderationId'?: "moderationId";
}

export interface ModerateRequest__Output {
  'tenantId': (string);
  'clientId': (string);
  'clientUrl'?: (string);
  'name': (string);
  'entity': (string);
  'content': (_vigil_moderation_v1_Content__Output | null);
  'metadataJson'?: (string);
  'user'?: (_vigil_moderation_v1_UserInput__Output | null);
  'passthrough': (boolean);
  'requestId': (string);
  'moderationId'?: (string);
  '_clientUrl'?: "clientUrl";
  '_metadataJson'?: "metadataJson";
  '_user'?: "user";
  '_moderationId'?: "moderationId";
}
