// Original file: vigil/moderation/v1/moderation.proto

import type { Long } from '@grpc/proto-loader';

export interface Record {
  'id'?: (string);
  'clientId'?: (string);
  'clientUrl'?: (string);
  'name'?: (string);
  'entity'?: (string);
  'protected'?: (boolean);
  'metadataJson'?: (string);
  'status'?: (string);
  'statusUpdatedAt'?: (string);
  'statusUpdatedVia'?: (string);
  'moderationPending'?: (boolean);
  'userId'?: (string);
  'createdAt'?: (string);
  'updatedAt'?: (string);
  'passthrough'?: (boolean);
  'version'?: (number | string | Long);
  'reasons'?: (string)[];
  'rules'?: (string)[];
  'openReportsCount'?: (number);
  '_clientUrl'?: "clientUrl";
  '_name'?: "name";
  '_metadataJson'?: "metadataJson";
  '_status'?: "status";
  '_statusUpdatedAt'?: "statusUpdatedAt";
  '_statusUpdatedVia'?: "statusUpdatedVia";
  '_userId'?: "userId";
}

export interface Record__Output {
  'id': (string);
  'clientId': (string);
  'clientUrl'?: (string);
  'name'?: (string);
  'entity': (string);
  'protected': (boolean);
  'metadataJson'?: (string);
  'status'?: (string);
  'statusUpdatedAt'?: (string);
  'statusUpdatedVia'?: (string);
  'moderationPending': (boolean);
  'userId'?: (string);
  'createdAt': (string);
  'updatedAt': (string);
  'passthrough': (boolean);
  'version': (number);
  'reasons': (string)[];
  'rules': (string)[];
  'openReportsCount': (number);
  '_clientUrl'?: "clientUrl";
  '_name'?: "name";
  '_metadataJson'?: "metadataJson";
  '_status'?: "status";
  '_statusUpdatedAt'?: "statusUpdatedAt";
  '_statusUpdatedVia'?: "statusUpdatedVia";
  '_userId'?: "userId";
}
