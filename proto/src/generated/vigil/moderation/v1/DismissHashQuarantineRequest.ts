// Original file: vigil/moderation/v1/hash_banks.proto


export interface DismissHashQuarantineRequest {
  'tenantId'?: (string);
  'hashId'?: (string);
}

export interface DismissHashQuarantineRequest__Output {
  'tenantId': (string);
  'hashId': (string);
}
