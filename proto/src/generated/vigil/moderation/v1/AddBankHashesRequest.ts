// Original file: vigil/moderation/v1/hash_banks.proto

import type { NewBankHash as _vigil_moderation_v1_NewBankHash, NewBankHash__Output as _vigil_moderation_v1_NewBankHash__Output } from '../../../vigil/moderation/v1/NewBankHash';

export interface AddBankHashesRequest {
  'tenantId'?: (string);
  'bankId'?: (string);
  'hashes'?: (_vigil_moderation_v1_NewBankHash)[];
  'csv'?: (string);
}

export interface AddBankHashesRequest__Output {
  'tenantId': (string);
  'bankId': (string);
  'hashes': (_vigil_moderation_v1_NewBankHash__Output)[];
  'csv': (string);
}
