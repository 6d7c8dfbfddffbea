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
  'floodThreshold'?: (number);
  'floodWindowSeconds'?: (number);
  '_description'?: "description";
  '_distance'?: "distance";
  '_policyId'?: "policyId";
  '_enabled'?: "enabled";
  '_floodThreshold'?: "floodThreshold";
  '_floodWindowSeconds'?: "floodWindowSeconds";
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
  'floodThreshold'?: (number);
  'floodWindowSeconds'?: (number);
  '_description'?: "description";
  '_distance'?: "distance";
  '_policyId'?: "policyId";
  '_enabled'?: "enabled";
  '_floodThreshold'?: "floodThreshold";
  '_floodWindowSeconds'?: "floodWindowSeconds";
}
