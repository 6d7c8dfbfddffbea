// Original file: vigil/moderation/v1/hash_feeds.proto


export interface UpdateHashFeedRequest {
  'tenantId'?: (string);
  'bankId'?: (string);
  'feedId'?: (string);
  'url'?: (string);
  'intervalSeconds'?: (number);
  'enabled'?: (boolean);
  'credentialsJson'?: (string);
  'clearCredentials'?: (boolean);
  '_url'?: "url";
  '_intervalSeconds'?: "intervalSeconds";
  '_enabled'?: "enabled";
  '_credentialsJson'?: "credentialsJson";
}

export interface UpdateHashFeedRequest__Output {
  'tenantId': (string);
  'bankId': (string);
  'feedId': (string);
  'url'?: (string);
  'intervalSeconds'?: (number);
  'enabled'?: (boolean);
  'credentialsJson'?: (string);
  'clearCredentials': (boolean);
  '_url'?: "url";
  '_intervalSeconds'?: "intervalSeconds";
  '_enabled'?: "enabled";
  '_credentialsJson'?: "credentialsJson";
}
