// Original file: vigil/moderation/v1/moderation.proto


export interface CreateAppealRequest {
  'tenantId'?: (string);
  'userId'?: (string);
  'text'?: (string);
}

export interface CreateAppealRequest__Output {
  'tenantId': (string);
  'userId': (string);
  'text': (string);
}
