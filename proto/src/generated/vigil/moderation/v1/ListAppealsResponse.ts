// Original file: vigil/moderation/v1/moderation.proto

import type { Appeal as _vigil_moderation_v1_Appeal, Appeal__Output as _vigil_moderation_v1_Appeal__Output } from '../../../vigil/moderation/v1/Appeal';

export interface ListAppealsResponse {
  'appeals'?: (_vigil_moderation_v1_Appeal)[];
  'hasMore'?: (boolean);
}

export interface ListAppealsResponse__Output {
  'appeals': (_vigil_moderation_v1_Appeal__Output)[];
  'hasMore': (boolean);
}
