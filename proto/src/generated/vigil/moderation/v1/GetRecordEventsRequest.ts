// Original file: vigil/moderation/v1/moderation.proto


export interface GetRecordEventsRequest {
  'tenantId'?: (string);
  'recordId'?: (string);
}

export interface GetRecordEventsRequest__Output {
  'tenantId': (string);
  'recordId': (string);
}
