// Original file: vigil/moderation/v1/hash_banks.proto


export interface HashQuarantine {
  'hashId'?: (string);
  'bankId'?: (string);
  'bankName'?: (string);
  'kind'?: (string);
  'state'?: (string);
  'number'?: (number);
  'threshold'?: (number);
  'windowSeconds'?: (number);
  'count'?: (number);
  'held'?: (number);
  'overflow'?: (number);
  'since'?: (string);
  'metadataJson'?: (string);
}

export interface HashQuarantine__Output {
  'hashId': (string);
  'bankId': (string);
  'bankName': (string);
  'kind': (string);
  'state': (string);
  'number': (number);
  'threshold': (number);
  'windowSeconds': (number);
  'count': (number);
  'held': (number);
  'overflow': (number);
  'since': (string);
  'metadataJson': (string);
}
