// Original file: vigil/moderation/v1/hash_banks.proto


export interface ListBankHashesRequest {
  'tenantId'?: (string);
  'bankId'?: (string);
  'limit'?: (number);
  'startingAfter'?: (string);
}

export interface ListBankHashesRequest__Output {
  'tenantId': (string);
  'bankId': (string);
  'limit': (number);
  'startingAfter': (string);
}
