// Original file: vigil/moderation/v1/hash_banks.proto


export interface CreateHashBankRequest {
  'tenantId'?: (string);
  'name'?: (string);
  'description'?: (string);
  'kind'?: (string);
  'distance'?: (number);
  'policyId'?: (string);
  'action'?: (string);
  'negative'?: (boolean);
  'enabled'?: (boolean);
  '_description'?: "description";
  '_distance'?: "distance";
  '_policyId'?: "policyId";
  '_enabled'?: "enabled";
}

export interface CreateHashBankRequest__Output {
  'tenantId': (string);
  'name': (string);
  'description'?: (string);
  'kind': (string);
  'distance'?: (number);
  'policyId'?: (string);
  'action': (string);
  'negative': (boolean);
  'enabled'?: (boolean);
  '_description'?: "description";
  '_distance'?: "distance";
  '_policyId'?: "policyId";
  '_enabled'?: "enabled";
}
