// Original file: vigil/moderation/v1/moderation.proto


export interface ListRecordsRequest {
  'tenantId'?: (string);
  'limit'?: (number);
  'startingAfter'?: (string);
  'endingBefore'?: (string);
  'clientId'?: (string);
  'entity'?: (string);
  'status'?: (string);
  'userId'?: (string);
  'newestFirst'?: (boolean);
  'createdAfter'?: (string);
  'createdBefore'?: (string);
  '_startingAfter'?: "startingAfter";
  '_endingBefore'?: "endingBefore";
  '_clientId'?: "clientId";
  '_entity'?: "entity";
  '_status'?: "status";
  '_userId'?: "userId";
  '_createdAfter'?: "createdAfter";
  '_createdBefore'?: "createdBefore";
}

export interface ListRecordsRequest__Output {
  'tenantId': (string);
  'limit': (number);
  'startingAfter'?: (string);
  'endingBefore'?: (string);
  'clientId'?: (string);
  'entity'?: (string);
  'status'?: (string);
  'userId'?: (string);
  'newestFirst': (boolean);
  'createdAfter'?: (string);
  'createdBefore'?: (string);
  '_startingAfter'?: "startingAfter";
  '_endingBefore'?: "endingBefore";
  '_clientId'?: "clientId";
  '_entity'?: "entity";
  '_status'?: "status";
  '_userId'?: "userId";
  '_createdAfter'?: "createdAfter";
  '_createdBefore'?: "createdBefore";
}
