// Original file: vigil/moderation/v1/moderation.proto


export interface ModerateRecordManuallyRequest {
  'tenantId'?: (string);
  'recordId'?: (string);
  'status'?: (string);
  'reason'?: (string);
  'actor'?: (string);
  'moderationId'?: (string);
  'policy'?: (string);
}

export interface ModerateRecordManuallyRequest__Output {
  'tenantId': (string);
  'recordId': (string);
  'status': (string);
  'reason': (string);
  'actor': (string);
  'moderationId': (string);
  'policy': (string);
}
