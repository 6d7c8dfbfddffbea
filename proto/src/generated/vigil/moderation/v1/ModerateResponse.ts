// Original file: vigil/moderation/v1/moderation.proto

import type { HashMatch as _vigil_moderation_v1_HashMatch, HashMatch__Output as _vigil_moderation_v1_HashMatch__Output } from '../../../vigil/moderation/v1/HashMatch';

export interface ModerateResponse {
  'recordId'?: (string);
  'status'?: (string);
  'moderationId'?: (string);
  'userId'?: (string);
  'flagged'?: (boolean);
  'reasons'?: (string)[];
  'rules'?: (string)[];
  'testMode'?: (boolean);
  'ruleSetVersion'?: (number);
  'maskedContent'?: (string);
  'hashMatches'?: (_vigil_moderation_v1_HashMatch)[];
  '_userId'?: "userId";
  '_maskedContent'?: "maskedContent";
}

export interface ModerateResponse__Output {
  'recordId': (string);
  'status': (string);
  'moderationId': (string);
  'userId'?: (string);
  'flagged': (boolean);
  'reasons': (string)[];
  'rules': (string)[];
  'testMode': (boolean);
  'ruleSetVersion': (number);
  'maskedContent'?: (string);
  'hashMatches': (_vigil_moderation_v1_HashMatch__Output)[];
  '_userId'?: "userId";
  '_maskedContent'?: "maskedContent";
}
