// Original file: vigil/moderation/v1/moderation.proto

import type { Long } from '@grpc/proto-loader';

export interface StoredEvent {
  'id'?: (string);
  'type'?: (string);
  'version'?: (number | string | Long);
  'occurredAt'?: (string);
  'dataJson'?: (string);
}

export interface StoredEvent__Output {
  'id': (string);
  'type': (string);
  'version': (number);
  'occurredAt': (string);
  'dataJson': (string);
}
