// Original file: vigil/moderation/v1/hash_banks.proto

import type { HashBank as _vigil_moderation_v1_HashBank, HashBank__Output as _vigil_moderation_v1_HashBank__Output } from '../../../vigil/moderation/v1/HashBank';

export interface ListHashBanksResponse {
  'banks'?: (_vigil_moderation_v1_HashBank)[];
}

export interface ListHashBanksResponse__Output {
  'banks': (_vigil_moderation_v1_HashBank__Output)[];
}
