// Original file: vigil/moderation/v1/moderation.proto

import type { ReportTarget as _vigil_moderation_v1_ReportTarget, ReportTarget__Output as _vigil_moderation_v1_ReportTarget__Output } from '../../../vigil/moderation/v1/ReportTarget';
import type { Reporter as _vigil_moderation_v1_Reporter, Reporter__Output as _vigil_moderation_v1_Reporter__Output } from '../../../vigil/moderation/v1/Reporter';
import type { ReportDecision as _vigil_moderation_v1_ReportDecision, ReportDecision__Output as _vigil_moderation_v1_ReportDecision__Output } from '../../../vigil/moderation/v1/ReportDecision';
import type { ReportComplaint as _vigil_moderation_v1_ReportComplaint, ReportComplaint__Output as _vigil_moderation_v1_ReportComplaint__Output } from '../../../vigil/moderation/v1/ReportComplaint';

export interface Report {
  'id'?: (string);
  'status'?: (string);
  'target'?: (_vigil_moderation_v1_ReportTarget | null);
  'reporter'?: (_vigil_moderation_v1_Reporter | null);
  'category'?: (string);
  'ground'?: (string);
  'explanation'?: (string);
  'legalGround'?: (string);
  'url'?: (string);
  'goodFaith'?: (boolean);
  'decision'?: (_vigil_moderation_v1_ReportDecision | null);
  'targetOpenReports'?: (number);
  'createdAt'?: (string);
  'updatedAt'?: (string);
  'complaint'?: (_vigil_moderation_v1_ReportComplaint | null);
  '_legalGround'?: "legalGround";
  '_url'?: "url";
  '_decision'?: "decision";
  '_complaint'?: "complaint";
}

export interface Report__Output {
  'id': (string);
  'status': (string);
  'target': (_vigil_moderation_v1_ReportTarget__Output | null);
  'reporter': (_vigil_moderation_v1_Reporter__Output | null);
  'category': (string);
  'ground': (string);
  'explanation': (string);
  'legalGround'?: (string);
  'url'?: (string);
  'goodFaith': (boolean);
  'decision'?: (_vigil_moderation_v1_ReportDecision__Output | null);
  'targetOpenReports': (number);
  'createdAt': (string);
  'updatedAt': (string);
  'complaint'?: (_vigil_moderation_v1_ReportComplaint__Output | null);
  '_legalGround'?: "legalGround";
  '_url'?: "url";
  '_decision'?: "decision";
  '_complaint'?: "complaint";
}
