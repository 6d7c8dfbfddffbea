// Original file: vigil/moderation/v1/hash_banks.proto


export interface NewBankHash {
  'value'?: (string);
  'metadataJson'?: (string);
}

export interface NewBankHash__Output {
  'value': (string);
  'metadataJson': (string);
}
