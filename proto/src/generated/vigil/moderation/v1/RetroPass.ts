// Original file: vigil/moderation/v1/hash_banks.proto

import type { Long } from '@grpc/proto-loader';

export interface RetroPass {
  'id'?: (string);
  'state'?: (string);
  'trigger'?: (string);
  'hashes'?: (number);
  'scanned'?: (number | string | Long);
  'matched'?: (number | string | Long);
  'flagged'?: (number | string | Long);
  'heldByHumans'?: (number | string | Long);
  'createdAt'?: (string);
  'startedAt'?: (string);
  'finishedAt'?: (string);
  'error'?: (string);
  '_startedAt'?: "startedAt";
  '_finishedAt'?: "finishedAt";
  '_error'?: "error";
}

export interface RetroPass__Output {
  'id': (string);
  'state': (string);
  'trigger': (string);
  'hashes': (number);
  'scanned': (number);
  'matched': (number);
  'flagged': (number);
  'heldByHumans': (number);
  'createdAt': (string);
  'startedAt'?: (string);
  'finishedAt'?: (string);
  'error'?: (string);
  '_startedAt'?: "startedAt";
  '_finishedAt'?: "finishedAt";
  '_error'?: "error";
}
