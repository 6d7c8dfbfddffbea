// Original file: vigil/moderation/v1/moderation.proto


export interface DecideAppealRequest {
  'tenantId'?: (string);
  'appealId'?: (string);
  'decision'?: (string);
  'reason'?: (string);
  'actor'?: (string);
}

export interface DecideAppealRequest__Output {
  'tenantId': (string);
  'appealId': (string);
  'decision': (string);
  'reason': (string);
  'actor': (string);
}
