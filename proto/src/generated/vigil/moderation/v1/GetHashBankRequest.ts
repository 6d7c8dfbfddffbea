// Original file: vigil/moderation/v1/hash_banks.proto


export interface GetHashBankRequest {
  'tenantId'?: (string);
  'bankId'?: (string);
}

export interface GetHashBankRequest__Output {
  'tenantId': (string);
  'bankId': (string);
}
