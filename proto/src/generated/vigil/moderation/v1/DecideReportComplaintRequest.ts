// Original file: vigil/moderation/v1/moderation.proto


export interface DecideReportComplaintRequest {
  'tenantId'?: (string);
  'reportId'?: (string);
  'outcome'?: (string);
  'action'?: (string);
  'reason'?: (string);
  'actor'?: (string);
  'policy'?: (string);
  '_action'?: "action";
}

export interface DecideReportComplaintRequest__Output {
  'tenantId': (string);
  'reportId': (string);
  'outcome': (string);
  'action'?: (string);
  'reason': (string);
  'actor': (string);
  'policy': (string);
  '_action'?: "action";
}
