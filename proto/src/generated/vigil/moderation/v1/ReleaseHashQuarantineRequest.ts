// Original file: vigil/moderation/v1/hash_banks.proto


export interface ReleaseHashQuarantineRequest {
  'tenantId'?: (string);
  'hashId'?: (string);
}

export interface ReleaseHashQuarantineRequest__Output {
  'tenantId': (string);
  'hashId': (string);
}
