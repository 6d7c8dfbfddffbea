// Original file: vigil/moderation/v1/moderation.proto


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
  '_userId'?: "userId";
  '_maskedContent'?: "maskedContent";
}
