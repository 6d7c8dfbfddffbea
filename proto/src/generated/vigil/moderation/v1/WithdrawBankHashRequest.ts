// Original file: vigil/moderation/v1/hash_banks.proto


export interface WithdrawBankHashRequest {
  'tenantId'?: (string);
  'bankId'?: (string);
  'hashId'?: (string);
}

export interface WithdrawBankHashRequest__Output {
  'tenantId': (string);
  'bankId': (string);
  'hashId': (string);
}
