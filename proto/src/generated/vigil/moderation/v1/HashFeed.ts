// Original file: vigil/moderation/v1/hash_feeds.proto

import type { HashFeedRun as _vigil_moderation_v1_HashFeedRun, HashFeedRun__Output as _vigil_moderation_v1_HashFeedRun__Output } from '../../../vigil/moderation/v1/HashFeedRun';

export interface HashFeed {
  'id'?: (string);
  'bankId'?: (string);
  'source'?: (string);
  'url'?: (string);
  'intervalSeconds'?: (number);
  'enabled'?: (boolean);
  'hasCredentials'?: (boolean);
  'lastRun'?: (_vigil_moderation_v1_HashFeedRun | null);
  'nextRunAt'?: (string);
  'createdAt'?: (string);
  'updatedAt'?: (string);
  '_lastRun'?: "lastRun";
}

export interface HashFeed__Output {
  'id': (string);
  'bankId': (string);
  'source': (string);
  'url': (string);
  'intervalSeconds': (number);
  'enabled': (boolean);
  'hasCredentials': (boolean);
  'lastRun'?: (_vigil_moderation_v1_HashFeedRun__Output | null);
  'nextRunAt': (string);
  'createdAt': (string);
  'updatedAt': (string);
  '_lastRun'?: "lastRun";
}
