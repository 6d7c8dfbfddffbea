// Original file: vigil/moderation/v1/hash_feeds.proto

import type { HashFeed as _vigil_moderation_v1_HashFeed, HashFeed__Output as _vigil_moderation_v1_HashFeed__Output } from '../../../vigil/moderation/v1/HashFeed';

export interface ListHashFeedsResponse {
  'feeds'?: (_vigil_moderation_v1_HashFeed)[];
}

export interface ListHashFeedsResponse__Output {
  'feeds': (_vigil_moderation_v1_HashFeed__Output)[];
}
