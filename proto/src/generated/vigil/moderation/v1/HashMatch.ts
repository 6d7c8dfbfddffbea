// Original file: vigil/moderation/v1/hash_banks.proto


export interface HashMatch {
  'position'?: (number);
  'bankId'?: (string);
  'bankName'?: (string);
  'kind'?: (string);
  'distance'?: (number);
  'hashId'?: (string);
  'metadataJson'?: (string);
  'action'?: (string);
  'policyId'?: (string);
  'cancelledBy'?: (string);
  'quarantined'?: (boolean);
  '_policyId'?: "policyId";
  '_cancelledBy'?: "cancelledBy";
}

export interface HashMatch__Output {
  'position': (number);
  'bankId': (string);
  'bankName': (string);
  'kind': (string);
  'distance': (number);
  'hashId': (string);
  'metadataJson': (string);
  'action': (string);
  'policyId'?: (string);
  'cancelledBy'?: (string);
  'quarantined': (boolean);
  '_policyId'?: "policyId";
  '_cancelledBy'?: "cancelledBy";
}
