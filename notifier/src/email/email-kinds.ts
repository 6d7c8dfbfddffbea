// Which emails the notifier sends: the user email a status change calls for, and the fixed templates of a reporter's
// emails (the kinds and the tenant-editable templates are contracts, in @vigil/proto's emails.ts).
import type { EmailKind, EmailTemplate, ReporterEmailKind } from '@vigil/proto';

/** Which email a status change sends, if any: Compliant only when it ends a suspension (not after a ban), as Iffy. */
export function emailKindFor(status: string, previousStatus: string | null): EmailKind | undefined {
  if (status === previousStatus) return undefined;
  if (status === 'Suspended' || status === 'Banned') return status;
  if (status === 'Compliant' && previousStatus === 'Suspended') return 'Compliant';
  return undefined;
}

/** A reporter's emails, which a tenant cannot override. */
export const REPORTER_EMAIL_TEMPLATES: Readonly<Record<ReporterEmailKind, EmailTemplate>> = {
  ReportDecided: {
    subject: 'Your report to {{platformName}} was decided',
    heading: 'Your report was decided',
    body: 'Hello,\n\nThank you for your report to {{platformName}}. A moderator has reviewed it; the decision follows.',
  },
  ComplaintDecided: {
    subject: 'Your complaint to {{platformName}} was decided',
    heading: 'Your complaint was decided',
    body:
      'Hello,\n\nA moderator of {{platformName}} has reviewed your complaint about the decision on your report; ' +
      'the decision follows.',
  },
};
