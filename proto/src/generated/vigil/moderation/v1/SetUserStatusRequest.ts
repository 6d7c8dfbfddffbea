// Original file: vigil/moderation/v1/moderation.proto


export interface SetUserStatusRequest {
  'tenantId'?: (string);
  'userId'?: (string);
  'status'?: (string);
  'reason'?: (string);
  'actor'?: (string);
  'policy'?: (string);
}

export interface SetUserStatusRequest__Output {
  'tenantId': (string);
  'userId': (string);
  'status': (string);
  'reason': (string);
  'actor': (string);
  'policy': (string);
}
