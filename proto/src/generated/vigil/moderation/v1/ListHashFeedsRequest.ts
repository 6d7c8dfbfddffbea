// Original file: vigil/moderation/v1/hash_feeds.proto


export interface ListHashFeedsRequest {
  'tenantId'?: (string);
  'bankId'?: (string);
}

export interface ListHashFeedsRequest__Output {
  'tenantId': (string);
  'bankId': (string);
}
