// Original file: vigil/moderation/v1/moderation.proto

import type { Record as _vigil_moderation_v1_Record, Record__Output as _vigil_moderation_v1_Record__Output } from '../../../vigil/moderation/v1/Record';

export interface ListRecordsResponse {
  'records'?: (_vigil_moderation_v1_Record)[];
  'hasMore'?: (boolean);
}

export interface ListRecordsResponse__Output {
  'records': (_vigil_moderation_v1_Record__Output)[];
  'hasMore': (boolean);
}
