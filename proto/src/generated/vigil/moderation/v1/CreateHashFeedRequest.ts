// Original file: vigil/moderation/v1/hash_feeds.proto


export interface CreateHashFeedRequest {
  'tenantId'?: (string);
  'bankId'?: (string);
  'source'?: (string);
  'url'?: (string);
  'intervalSeconds'?: (number);
  'enabled'?: (boolean);
  'credentialsJson'?: (string);
  '_enabled'?: "enabled";
  '_credentialsJson'?: "credentialsJson";
}

export interface CreateHashFeedRequest__Output {
  'tenantId': (string);
  'bankId': (string);
  'source': (string);
  'url': (string);
  'intervalSeconds': (number);
  'enabled'?: (boolean);
  'credentialsJson'?: (string);
  '_enabled'?: "enabled";
  '_credentialsJson'?: "credentialsJson";
}
