// Original file: vigil/moderation/v1/hash_banks.proto


export interface LookupHashesRequest {
  'tenantId'?: (string);
  'kind'?: (string);
  'value'?: (string);
  'imageUrl'?: (string);
}

export interface LookupHashesRequest__Output {
  'tenantId': (string);
  'kind': (string);
  'value': (string);
  'imageUrl': (string);
}
