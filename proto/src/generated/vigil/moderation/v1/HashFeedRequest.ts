// Original file: vigil/moderation/v1/hash_feeds.proto


export interface HashFeedRequest {
  'tenantId'?: (string);
  'bankId'?: (string);
  'feedId'?: (string);
}

export interface HashFeedRequest__Output {
  'tenantId': (string);
  'bankId': (string);
  'feedId': (string);
}
