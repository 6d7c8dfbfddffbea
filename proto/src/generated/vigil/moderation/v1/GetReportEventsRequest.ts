// Original file: vigil/moderation/v1/moderation.proto


export interface GetReportEventsRequest {
  'tenantId'?: (string);
  'reportId'?: (string);
}

export interface GetReportEventsRequest__Output {
  'tenantId': (string);
  'reportId': (string);
}
