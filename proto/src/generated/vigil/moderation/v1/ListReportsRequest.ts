// Original file: vigil/moderation/v1/moderation.proto


export interface ListReportsRequest {
  'tenantId'?: (string);
  'limit'?: (number);
  'startingAfter'?: (string);
  'endingBefore'?: (string);
  'status'?: (string);
  'targetId'?: (string);
  'trusted'?: (boolean);
  'complaint'?: (string);
  '_startingAfter'?: "startingAfter";
  '_endingBefore'?: "endingBefore";
  '_status'?: "status";
  '_targetId'?: "targetId";
  '_trusted'?: "trusted";
  '_complaint'?: "complaint";
}

export interface ListReportsRequest__Output {
  'tenantId': (string);
  'limit': (number);
  'startingAfter'?: (string);
  'endingBefore'?: (string);
  'status'?: (string);
  'targetId'?: (string);
  'trusted'?: (boolean);
  'complaint'?: (string);
  '_startingAfter'?: "startingAfter";
  '_endingBefore'?: "endingBefore";
  '_status'?: "status";
  '_targetId'?: "targetId";
  '_trusted'?: "trusted";
  '_complaint'?: "complaint";
}
