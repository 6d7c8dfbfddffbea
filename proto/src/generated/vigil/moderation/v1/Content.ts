// Original file: vigil/moderation/v1/moderation.proto


export interface Content {
  'text'?: (string);
  'imageUrls'?: (string)[];
  'externalUrls'?: (string)[];
}

export interface Content__Output {
  'text': (string);
  'imageUrls': (string)[];
  'externalUrls': (string)[];
}
