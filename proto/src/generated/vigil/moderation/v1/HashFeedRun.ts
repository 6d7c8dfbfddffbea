// Original file: vigil/moderation/v1/hash_feeds.proto


export interface HashFeedRun {
  'state'?: (string);
  'at'?: (string);
  'added'?: (number);
  'withdrawn'?: (number);
  'duplicates'?: (number);
  'failure'?: (string);
  'message'?: (string);
  'failures'?: (number);
  '_failure'?: "failure";
  '_message'?: "message";
}

export interface HashFeedRun__Output {
  'state': (string);
  'at': (string);
  'added': (number);
  'withdrawn': (number);
  'duplicates': (number);
  'failure'?: (string);
  'message'?: (string);
  'failures': (number);
  '_failure'?: "failure";
  '_message'?: "message";
}
