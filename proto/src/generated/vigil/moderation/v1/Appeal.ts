// Original file: vigil/moderation/v1/moderation.proto


export interface Appeal {
  'id'?: (string);
  'userId'?: (string);
  'status'?: (string);
  'text'?: (string);
  'decisionReason'?: (string);
  'createdAt'?: (string);
  'updatedAt'?: (string);
  '_decisionReason'?: "decisionReason";
}

export interface Appeal__Output {
  'id': (string);
  'userId': (string);
  'status': (string);
  'text': (string);
  'decisionReason'?: (string);
  'createdAt': (string);
  'updatedAt': (string);
  '_decisionReason'?: "decisionReason";
}
