// Original file: vigil/moderation/v1/moderation.proto

import type { Report as _vigil_moderation_v1_Report, Report__Output as _vigil_moderation_v1_Report__Output } from '../../../vigil/moderation/v1/Report';

export interface ListReportsResponse {
  'reports'?: (_vigil_moderation_v1_Report)[];
  'hasMore'?: (boolean);
}

export interface ListReportsResponse__Output {
  'reports': (_vigil_moderation_v1_Report__Output)[];
  'hasMore': (boolean);
}
