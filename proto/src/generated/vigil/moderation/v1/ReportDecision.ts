// Original file: vigil/moderation/v1/moderation.proto


export interface ReportDecision {
  'outcome'?: (string);
  'action'?: (string);
  'reason'?: (string);
  'decisionId'?: (string);
  'decidedAt'?: (string);
  '_action'?: "action";
  '_decisionId'?: "decisionId";
}

export interface ReportDecision__Output {
  'outcome': (string);
  'action'?: (string);
  'reason': (string);
  'decisionId'?: (string);
  'decidedAt': (string);
  '_action'?: "action";
  '_decisionId'?: "decisionId";
}
