// Original file: vigil/moderation/v1/hash_banks.proto

import type { ImageHashSet as _vigil_moderation_v1_ImageHashSet, ImageHashSet__Output as _vigil_moderation_v1_ImageHashSet__Output } from '../../../vigil/moderation/v1/ImageHashSet';
import type { HashMatch as _vigil_moderation_v1_HashMatch, HashMatch__Output as _vigil_moderation_v1_HashMatch__Output } from '../../../vigil/moderation/v1/HashMatch';

export interface LookupHashesResponse {
  'image'?: (_vigil_moderation_v1_ImageHashSet | null);
  'matches'?: (_vigil_moderation_v1_HashMatch)[];
  'cancelled'?: (_vigil_moderation_v1_HashMatch)[];
  'failure'?: (string);
  '_image'?: "image";
  '_failure'?: "failure";
}

export interface LookupHashesResponse__Output {
  'image'?: (_vigil_moderation_v1_ImageHashSet__Output | null);
  'matches': (_vigil_moderation_v1_HashMatch__Output)[];
  'cancelled': (_vigil_moderation_v1_HashMatch__Output)[];
  'failure'?: (string);
  '_image'?: "image";
  '_failure'?: "failure";
}
