// Original file: vigil/moderation/v1/moderation.proto


export interface FileReportComplaintRequest {
  'tenantId'?: (string);
  'reportId'?: (string);
  'text'?: (string);
}

export interface FileReportComplaintRequest__Output {
  'tenantId': (string);
  'reportId': (string);
  'text': (string);
}
