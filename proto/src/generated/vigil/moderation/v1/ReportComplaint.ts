// Original file: vigil/moderation/v1/moderation.proto


export interface ReportComplaint {
  'id'?: (string);
  'status'?: (string);
  'text'?: (string);
  'filedAt'?: (string);
  'reason'?: (string);
  'action'?: (string);
  'decisionId'?: (string);
  'decidedAt'?: (string);
  '_reason'?: "reason";
  '_action'?: "action";
  '_decisionId'?: "decisionId";
  '_decidedAt'?: "decidedAt";
}

export interface ReportComplaint__Output {
  'id': (string);
  'status': (string);
  'text': (string);
  'filedAt': (string);
  'reason'?: (string);
  'action'?: (string);
  'decisionId'?: (string);
  'decidedAt'?: (string);
  '_reason'?: "reason";
  '_action'?: "action";
  '_decisionId'?: "decisionId";
  '_decidedAt'?: "decidedAt";
}
