// Original file: vigil/moderation/v1/moderation.proto


export interface CreateReportRequest {
  'tenantId'?: (string);
  'targetType'?: (string);
  'targetId'?: (string);
  'targetClientId'?: (string);
  'reporterType'?: (string);
  'reporterId'?: (string);
  'reporterEmail'?: (string);
  'category'?: (string);
  'ground'?: (string);
  'explanation'?: (string);
  'legalGround'?: (string);
  'url'?: (string);
  'goodFaith'?: (boolean);
  '_targetId'?: "targetId";
  '_targetClientId'?: "targetClientId";
  '_reporterEmail'?: "reporterEmail";
  '_legalGround'?: "legalGround";
  '_url'?: "url";
}

export interface CreateReportRequest__Output {
  'tenantId': (string);
  'targetType': (string);
  'targetId'?: (string);
  'targetClientId'?: (string);
  'reporterType': (string);
  'reporterId': (string);
  'reporterEmail'?: (string);
  'category': (string);
  'ground': (string);
  'explanation': (string);
  'legalGround'?: (string);
  'url'?: (string);
  'goodFaith': (boolean);
  '_targetId'?: "targetId";
  '_targetClientId'?: "targetClientId";
  '_reporterEmail'?: "reporterEmail";
  '_legalGround'?: "legalGround";
  '_url'?: "url";
}
