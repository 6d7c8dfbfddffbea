// Original file: vigil/moderation/v1/moderation.proto


export interface ListAppealsRequest {
  'tenantId'?: (string);
  'limit'?: (number);
  'startingAfter'?: (string);
  'status'?: (string);
  'userId'?: (string);
  '_startingAfter'?: "startingAfter";
  '_status'?: "status";
  '_userId'?: "userId";
}

export interface ListAppealsRequest__Output {
  'tenantId': (string);
  'limit': (number);
  'startingAfter'?: (string);
  'status'?: (string);
  'userId'?: (string);
  '_startingAfter'?: "startingAfter";
  '_status'?: "status";
  '_userId'?: "userId";
}
