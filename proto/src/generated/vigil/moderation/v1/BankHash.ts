// Original file: vigil/moderation/v1/hash_banks.proto


export interface BankHash {
  'id'?: (string);
  'bankId'?: (string);
  'value'?: (string);
  'metadataJson'?: (string);
  'enabled'?: (boolean);
  'review'?: (string);
  'createdAt'?: (string);
  'updatedAt'?: (string);
}

export interface BankHash__Output {
  'id': (string);
  'bankId': (string);
  'value': (string);
  'metadataJson': (string);
  'enabled': (boolean);
  'review': (string);
  'createdAt': (string);
  'updatedAt': (string);
}
