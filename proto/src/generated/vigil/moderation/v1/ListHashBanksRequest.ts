// Original file: vigil/moderation/v1/hash_banks.proto


export interface ListHashBanksRequest {
  'tenantId'?: (string);
}

export interface ListHashBanksRequest__Output {
  'tenantId': (string);
}
