// Original file: vigil/moderation/v1/hash_banks.proto


export interface DismissHashQuarantineResponse {
  'dropped'?: (number);
}

export interface DismissHashQuarantineResponse__Output {
  'dropped': (number);
}
