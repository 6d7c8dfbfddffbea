// Original file: vigil/moderation/v1/moderation.proto


export interface GetUserEventsRequest {
  'tenantId'?: (string);
  'userId'?: (string);
}

export interface GetUserEventsRequest__Output {
  'tenantId': (string);
  'userId': (string);
}
