// Original file: vigil/moderation/v1/hash_banks.proto


export interface UpdateBankHashRequest {
  'tenantId'?: (string);
  'bankId'?: (string);
  'hashId'?: (string);
  'enabled'?: (boolean);
  'review'?: (string);
  'metadataJson'?: (string);
  '_enabled'?: "enabled";
  '_review'?: "review";
  '_metadataJson'?: "metadataJson";
}

export interface UpdateBankHashRequest__Output {
  'tenantId': (string);
  'bankId': (string);
  'hashId': (string);
  'enabled'?: (boolean);
  'review'?: (string);
  'metadataJson'?: (string);
  '_enabled'?: "enabled";
  '_review'?: "review";
  '_metadataJson'?: "metadataJson";
}
