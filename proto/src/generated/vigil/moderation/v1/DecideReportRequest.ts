// Original file: vigil/moderation/v1/moderation.proto


export interface DecideReportRequest {
  'tenantId'?: (string);
  'reportId'?: (string);
  'outcome'?: (string);
  'action'?: (string);
  'reason'?: (string);
  'actor'?: (string);
  'policy'?: (string);
  '_action'?: "action";
}

export interface DecideReportRequest__Output {
  'tenantId': (string);
  'reportId': (string);
  'outcome': (string);
  'action'?: (string);
  'reason': (string);
  'actor': (string);
  'policy': (string);
  '_action'?: "action";
}
