// Original file: vigil/moderation/v1/hash_banks.proto

import type { BankHash as _vigil_moderation_v1_BankHash, BankHash__Output as _vigil_moderation_v1_BankHash__Output } from '../../../vigil/moderation/v1/BankHash';

export interface ListBankHashesResponse {
  'hashes'?: (_vigil_moderation_v1_BankHash)[];
  'hasMore'?: (boolean);
}

export interface ListBankHashesResponse__Output {
  'hashes': (_vigil_moderation_v1_BankHash__Output)[];
  'hasMore': (boolean);
}
