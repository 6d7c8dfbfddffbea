// Original file: vigil/moderation/v1/moderation.proto


export interface GetUserRequest {
  'tenantId'?: (string);
  'userId'?: (string);
}

export interface GetUserRequest__Output {
  'tenantId': (string);
  'userId': (string);
}
