// Original file: vigil/moderation/v1/hash_banks.proto

import type { HashQuarantine as _vigil_moderation_v1_HashQuarantine, HashQuarantine__Output as _vigil_moderation_v1_HashQuarantine__Output } from '../../../vigil/moderation/v1/HashQuarantine';

export interface ListHashQuarantinesResponse {
  'quarantines'?: (_vigil_moderation_v1_HashQuarantine)[];
}

export interface ListHashQuarantinesResponse__Output {
  'quarantines': (_vigil_moderation_v1_HashQuarantine__Output)[];
}
