// Original file: vigil/moderation/v1/moderation.proto


export interface ListUsersRequest {
  'tenantId'?: (string);
  'limit'?: (number);
  'startingAfter'?: (string);
  'endingBefore'?: (string);
  'clientId'?: (string);
  'email'?: (string);
  'status'?: (string);
  '_startingAfter'?: "startingAfter";
  '_endingBefore'?: "endingBefore";
  '_clientId'?: "clientId";
  '_email'?: "email";
  '_status'?: "status";
}

export interface ListUsersRequest__Output {
  'tenantId': (string);
  'limit': (number);
  'startingAfter'?: (string);
  'endingBefore'?: (string);
  'clientId'?: (string);
  'email'?: (string);
  'status'?: (string);
  '_startingAfter'?: "startingAfter";
  '_endingBefore'?: "endingBefore";
  '_clientId'?: "clientId";
  '_email'?: "email";
  '_status'?: "status";
}
