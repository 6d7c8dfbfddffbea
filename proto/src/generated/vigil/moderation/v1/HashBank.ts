// Original file: vigil/moderation/v1/hash_banks.proto


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
  '_description'?: "description";
  '_policyId'?: "policyId";
  '_floodThreshold'?: "floodThreshold";
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
  '_description'?: "description";
  '_policyId'?: "policyId";
  '_floodThreshold'?: "floodThreshold";
}
