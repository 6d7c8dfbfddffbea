// Original file: vigil/moderation/v1/hash_banks.proto


export interface ImageHashSet {
  'position'?: (number);
  'md5'?: (string);
  'sha256'?: (string);
  'pdq'?: (string);
  'pdqQuality'?: (number);
  'pdqFailure'?: (string);
  '_pdq'?: "pdq";
  '_pdqQuality'?: "pdqQuality";
  '_pdqFailure'?: "pdqFailure";
}

export interface ImageHashSet__Output {
  'position': (number);
  'md5': (string);
  'sha256': (string);
  'pdq'?: (string);
  'pdqQuality'?: (number);
  'pdqFailure'?: (string);
  '_pdq'?: "pdq";
  '_pdqQuality'?: "pdqQuality";
  '_pdqFailure'?: "pdqFailure";
}
