// Original file: vigil/moderation/v1/moderation.proto


export interface GetReportRequest {
  'tenantId'?: (string);
  'reportId'?: (string);
}

export interface GetReportRequest__Output {
  'tenantId': (string);
  'reportId': (string);
}
