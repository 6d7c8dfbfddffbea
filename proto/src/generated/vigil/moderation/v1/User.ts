// Original file: vigil/moderation/v1/moderation.proto

import type { Long } from '@grpc/proto-loader';

export interface User {
  'id'?: (string);
  'clientId'?: (string);
  'clientUrl'?: (string);
  'email'?: (string);
  'name'?: (string);
  'username'?: (string);
  'protected'?: (boolean);
  'metadataJson'?: (string);
  'status'?: (string);
  'statusUpdatedAt'?: (string);
  'statusUpdatedVia'?: (string);
  'flaggedRecordsCount'?: (number);
  'createdAt'?: (string);
  'updatedAt'?: (string);
  'version'?: (number | string | Long);
  'openReportsCount'?: (number);
  '_clientUrl'?: "clientUrl";
  '_email'?: "email";
  '_name'?: "name";
  '_username'?: "username";
  '_metadataJson'?: "metadataJson";
  '_status'?: "status";
  '_statusUpdatedAt'?: "statusUpdatedAt";
  '_statusUpdatedVia'?: "statusUpdatedVia";
}

export interface User__Output {
  'id': (string);
  'clientId': (string);
  'clientUrl'?: (string);
  'email'?: (string);
  'name'?: (string);
  'username'?: (string);
  'protected': (boolean);
  'metadataJson'?: (string);
  'status'?: (string);
  'statusUpdatedAt'?: (string);
  'statusUpdatedVia'?: (string);
  'flaggedRecordsCount': (number);
  'createdAt': (string);
  'updatedAt': (string);
  'version': (number);
  'openReportsCount': (number);
  '_clientUrl'?: "clientUrl";
  '_email'?: "email";
  '_name'?: "name";
  '_username'?: "username";
  '_metadataJson'?: "metadataJson";
  '_status'?: "status";
  '_statusUpdatedAt'?: "statusUpdatedAt";
  '_statusUpdatedVia'?: "statusUpdatedVia";
}
