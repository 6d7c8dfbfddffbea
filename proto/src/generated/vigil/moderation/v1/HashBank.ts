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
  '_description'?: "description";
  '_policyId'?: "policyId";
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
  '_description'?: "description";
  '_policyId'?: "policyId";
}
