// Original file: vigil/moderation/v1/hash_banks.proto


export interface DeleteHashBankRequest {
  'tenantId'?: (string);
  'bankId'?: (string);
}

export interface DeleteHashBankRequest__Output {
  'tenantId': (string);
  'bankId': (string);
}
