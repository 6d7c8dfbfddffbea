// Original file: vigil/moderation/v1/hash_banks.proto


export interface ListHashQuarantinesRequest {
  'tenantId'?: (string);
}

export interface ListHashQuarantinesRequest__Output {
  'tenantId': (string);
}
