// Original file: vigil/moderation/v1/hash_banks.proto


export interface ReleaseHashQuarantineResponse {
  'applied'?: (number);
  'skipped'?: (number);
}

export interface ReleaseHashQuarantineResponse__Output {
  'applied': (number);
  'skipped': (number);
}
