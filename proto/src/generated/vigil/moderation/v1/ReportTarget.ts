// Original file: vigil/moderation/v1/moderation.proto


export interface ReportTarget {
  'type'?: (string);
  'id'?: (string);
  'clientId'?: (string);
}

export interface ReportTarget__Output {
  'type': (string);
  'id': (string);
  'clientId': (string);
}
