// Original file: vigil/moderation/v1/hash_banks.proto


export interface GetBankHashRequest {
  'tenantId'?: (string);
  'bankId'?: (string);
  'hashId'?: (string);
}

export interface GetBankHashRequest__Output {
  'tenantId': (string);
  'bankId': (string);
  'hashId': (string);
}
