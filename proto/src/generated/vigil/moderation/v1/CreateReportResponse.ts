// Original file: vigil/moderation/v1/moderation.proto

import type { Report as _vigil_moderation_v1_Report, Report__Output as _vigil_moderation_v1_Report__Output } from '../../../vigil/moderation/v1/Report';

export interface CreateReportResponse {
  'report'?: (_vigil_moderation_v1_Report | null);
  'duplicate'?: (boolean);
}

export interface CreateReportResponse__Output {
  'report': (_vigil_moderation_v1_Report__Output | null);
  'duplicate': (boolean);
}
