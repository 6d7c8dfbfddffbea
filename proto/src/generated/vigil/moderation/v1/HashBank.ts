// Original file: vigil/moderation/v1/hash_banks.proto

import type { RetroPass as _vigil_moderation_v1_RetroPass, RetroPass__Output as _vigil_moderation_v1_RetroPass__Output } from '../../../vigil/moderation/v1/RetroPass';

export interface HashBank {
  'id'?: (string);
  'name'?: (string);
  'description'?: (string);
  'kind'?: (string);
  'distance'?: (number);
  'policyId'?: (string);
  'action'?: (string);
  'negative'?: (boolean);
  'enabled'?: (boolean);
  'createdAt'?: (string);
  'updatedAt'?: (string);
  'floodThreshold'?: (number);
  'floodWindowSeconds'?: (number);
  'lastRetroPass'?: (_vigil_moderation_v1_RetroPass | null);
  '_description'?: "description";
  '_policyId'?: "policyId";
  '_floodThreshold'?: "floodThreshold";
  '_lastRetroPass'?: "lastRetroPass";
}

export interface HashBank__Output {
  'id': (string);
  'name': (string);
  'description'?: (string);
  'kind': (string);
  'distance': (number);
  'policyId'?: (string);
  'action': (string);
  'negative': (boolean);
  'enabled': (boolean);
  'createdAt': (string);
  'updatedAt': (string);
  'floodThreshold'?: (number);
  'floodWindowSeconds': (number);
  'lastRetroPass'?: (_vigil_moderation_v1_RetroPass__Output | null);
  '_description'?: "description";
  '_policyId'?: "policyId";
  '_floodThreshold'?: "floodThreshold";
  '_lastRetroPass'?: "lastRetroPass";
}
