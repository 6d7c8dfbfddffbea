// Original file: vigil/moderation/v1/moderation.proto


export interface ListReportsRequest {
  'tenantId'?: (string);
  'limit'?: (number);
  'startingAfter'?: (string);
  'endingBefore'?: (string);
  'status'?: (string);
  'targetId'?: (string);
  'trusted'?: (boolean);
  '_startingAfter'?: "startingAfter";
  '_endingBefore'?: "endingBefore";
  '_status'?: "status";
  '_targetId'?: "targetId";
  '_trusted'?: "trusted";
}

export interface ListReportsRequest__Output {
  'tenantId': (string);
  'limit': (number);
  'startingAfter'?: (string);
  'endingBefore'?: (string);
  'status'?: (string);
  'targetId'?: (string);
  'trusted'?: (boolean);
  '_startingAfter'?: "startingAfter";
  '_endingBefore'?: "endingBefore";
  '_status'?: "status";
  '_targetId'?: "targetId";
  '_trusted'?: "trusted";
}
