// Original file: vigil/moderation/v1/hash_banks.proto


export interface UpdateHashBankRequest {
  'tenantId'?: (string);
  'bankId'?: (string);
  'name'?: (string);
  'description'?: (string);
  'clearDescription'?: (boolean);
  'distance'?: (number);
  'policyId'?: (string);
  'clearPolicy'?: (boolean);
  'action'?: (string);
  'negative'?: (boolean);
  'enabled'?: (boolean);
  'floodThreshold'?: (number);
  'floodWindowSeconds'?: (number);
  'clearFlood'?: (boolean);
  '_name'?: "name";
  '_description'?: "description";
  '_distance'?: "distance";
  '_policyId'?: "policyId";
  '_action'?: "action";
  '_negative'?: "negative";
  '_enabled'?: "enabled";
  '_floodThreshold'?: "floodThreshold";
  '_floodWindowSeconds'?: "floodWindowSeconds";
}

export interface UpdateHashBankRequest__Output {
  'tenantId': (string);
  'bankId': (string);
  'name'?: (string);
  'description'?: (string);
  'clearDescription': (boolean);
  'distance'?: (number);
  'policyId'?: (string);
  'clearPolicy': (boolean);
  'action'?: (string);
  'negative'?: (boolean);
  'enabled'?: (boolean);
  'floodThreshold'?: (number);
  'floodWindowSeconds'?: (number);
  'clearFlood': (boolean);
  '_name'?: "name";
  '_description'?: "description";
  '_distance'?: "distance";
  '_policyId'?: "policyId";
  '_action'?: "action";
  '_negative'?: "negative";
  '_enabled'?: "enabled";
  '_floodThreshold'?: "floodThreshold";
  '_floodWindowSeconds'?: "floodWindowSeconds";
}
