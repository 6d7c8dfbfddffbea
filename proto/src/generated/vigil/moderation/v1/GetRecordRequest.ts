// Original file: vigil/moderation/v1/moderation.proto


export interface GetRecordRequest {
  'tenantId'?: (string);
  'recordId'?: (string);
}

export interface GetRecordRequest__Output {
  'tenantId': (string);
  'recordId': (string);
}
