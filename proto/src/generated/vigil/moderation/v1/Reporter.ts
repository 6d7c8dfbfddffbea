// Original file: vigil/moderation/v1/moderation.proto


export interface Reporter {
  'type'?: (string);
  'id'?: (string);
  'name'?: (string);
  'email'?: (string);
  'hasEmail'?: (boolean);
  '_name'?: "name";
  '_email'?: "email";
}

export interface Reporter__Output {
  'type': (string);
  'id': (string);
  'name'?: (string);
  'email'?: (string);
  'hasEmail': (boolean);
  '_name'?: "name";
  '_email'?: "email";
}
