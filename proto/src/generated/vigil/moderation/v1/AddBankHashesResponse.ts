// Original file: vigil/moderation/v1/hash_banks.proto

import type { BankHash as _vigil_moderation_v1_BankHash, BankHash__Output as _vigil_moderation_v1_BankHash__Output } from '../../../vigil/moderation/v1/BankHash';

export interface AddBankHashesResponse {
  'added'?: (_vigil_moderation_v1_BankHash)[];
  'duplicates'?: (number);
}

export interface AddBankHashesResponse__Output {
  'added': (_vigil_moderation_v1_BankHash__Output)[];
  'duplicates': (number);
}
