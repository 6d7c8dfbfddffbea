import { z } from 'zod';
import {
  ComplaintOutcome,
  ComplaintStatus,
  LIMITS,
  ReportAction,
  ReportCategory,
  ReportGround,
  ReportOutcome,
  ReporterType,
  ReportStatus,
  ReportTargetType,
  POLICY_ID,
} from '@vigil/proto';
import { dataOf, listOf, paging } from '../shared/paging.schema';

const NOTICE_FIELDS = ['legalGround', 'url', 'goodFaith'] as const;

export const CreateReportBody = z
  .strictObject({
    target: z
      .strictObject({
        type: ReportTargetType,
        id: z.string().min(1).max(LIMITS.queryId).optional().meta({ description: 'Record or user id (rec_…, usr_…).' }),
        clientId: z.string().min(1).max(LIMITS.clientId).optional(),
      })
      .refine((target) => (target.id === undefined) !== (target.clientId === undefined), {
        message: 'name the target by id or by clientId, one of the two',
      })
      .meta({ description: 'The reported record or user, by its id or by your clientId.' }),
    reporter: z
      .strictObject({
        type: ReporterType,
        id: z
          .string()
          .min(1)
          .max(LIMITS.reporterId)
          .meta({ description: "Your id of the end user, or the trusted flagger's id in the settings." }),
        email: z.email().max(LIMITS.email).optional().meta({
          description: "An end user's address for the outcome; kept apart, never logged or sent in webhooks.",
        }),
      })
      .refine((reporter) => reporter.type === 'user' || reporter.email === undefined, {
        message: 'only an end user reporter gives an email',
        path: ['email'],
      }),
    category: ReportCategory.meta({ description: "The EU Transparency Database's statement category." }),
    ground: ReportGround.default('INCOMPATIBLE_CONTENT').meta({
      description: 'ILLEGAL_CONTENT: a notice under Art. 16 DSA (legalGround, url and goodFaith required).',
    }),
    explanation: z.string().min(1).max(LIMITS.reportExplanation),
    legalGround: z.string().min(1).max(LIMITS.reportLegalGround).optional(),
    url: z
      .url({ protocol: /^https?$/ })
      .max(LIMITS.url)
      .optional()
      .meta({ description: 'The exact URL of the illegal content.' }),
    goodFaith: z
      .boolean()
      .optional()
      .meta({ description: 'The notifier confirms the notice is accurate and complete, in good faith.' }),
  })
  .superRefine((report, ctx) => {
    // A notice of illegal content is only one when it has all three (Art. 16(2) DSA); other reports carry none.
    for (const field of NOTICE_FIELDS) {
      const value = report[field];
      if (report.ground === 'ILLEGAL_CONTENT' && (value === undefined || value === false)) {
        const message =
          field === 'goodFaith'
            ? 'a notice of illegal content confirms good faith (true)'
            : 'required for ILLEGAL_CONTENT';
        ctx.addIssue({ code: 'custom', path: [field], message });
      }
      if (report.ground !== 'ILLEGAL_CONTENT' && value !== undefined) {
        ctx.addIssue({ code: 'custom', path: [field], message: 'only for ground ILLEGAL_CONTENT' });
      }
    }
  });

export const ListReportsQuery = z.object({
  ...paging,
  status: ReportStatus.optional(),
  target: z.string().min(1).max(LIMITS.queryId).optional().meta({ description: 'Record or user id (rec_…, usr_…).' }),
  trusted: z
    .enum(['true', 'false'])
    .optional()
    .meta({ description: "Only trusted flaggers' reports (true), or only the others (false)." }),
  complaint: ComplaintStatus.optional().meta({
    description: "Only reports whose reporter's complaint is in this state (Open: the complaints to decide).",
  }),
});

export const ComplaintBody = z.strictObject({
  text: z
    .string()
    .trim()
    .min(1)
    .max(LIMITS.complaintText)
    .meta({ description: "The reporter's words: why the decision not to act should change." }),
});

export const ComplaintDecisionBody = z
  .strictObject({
    outcome: ComplaintOutcome,
    action: ReportAction.optional().meta({
      description: 'With Upheld: Flag a reported record; Suspend or Ban a reported user.',
    }),
    reason: z.string().min(1).max(LIMITS.reason),
    policy: z.string().regex(POLICY_ID).optional().meta({
      description:
        'With Upheld: the policy the action rests on (GET /api/v1/policies); the default policy when absent.',
    }),
  })
  .superRefine((decision, ctx) => {
    if (decision.outcome === 'Upheld' && decision.action === undefined) {
      ctx.addIssue({ code: 'custom', path: ['action'], message: 'required when the outcome is Upheld' });
    }
    if (decision.outcome === 'Rejected' && decision.action !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['action'], message: 'no action is taken when a complaint is rejected' });
    }
  });

export const ReportDecisionBody = z
  .strictObject({
    outcome: ReportOutcome,
    action: ReportAction.optional().meta({
      description: 'With Actioned: Flag a reported record; Suspend or Ban a reported user.',
    }),
    reason: z.string().min(1).max(LIMITS.reason),
    policy: z.string().regex(POLICY_ID).optional().meta({
      description: 'The policy the decision rests on (GET /api/v1/policies); the default policy when absent.',
    }),
  })
  .superRefine((decision, ctx) => {
    if (decision.outcome === 'Actioned' && decision.action === undefined) {
      ctx.addIssue({ code: 'custom', path: ['action'], message: 'required when the outcome is Actioned' });
    }
    if (decision.outcome === 'NoAction' && decision.action !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['action'], message: 'no action is taken with NoAction' });
    }
  });

export const ReportView = z.object({
  id: z.string().meta({ description: 'The acknowledgement: the report id (rpt_…).' }),
  status: ReportStatus,
  target: z.object({ type: ReportTargetType, id: z.string(), clientId: z.string() }),
  reporter: z.object({
    type: ReporterType,
    id: z.string(),
    name: z.string().nullable().meta({ description: "A trusted flagger's name when it reported." }),
    email: z.string().nullable().meta({ description: 'Shown by GET /reports/{id} only.' }),
    hasEmail: z.boolean(),
  }),
  category: ReportCategory,
  ground: ReportGround,
  explanation: z.string(),
  legalGround: z.string().nullable(),
  url: z.string().nullable(),
  goodFaith: z.boolean(),
  decision: z
    .object({
      outcome: ReportOutcome,
      action: ReportAction.nullable(),
      reason: z.string(),
      decisionId: z.string().nullable().meta({ description: 'The moderation (mod_…) or user action (act_…) made.' }),
      decidedAt: z.string(),
    })
    .nullable(),
  targetOpenReports: z.number().int().meta({ description: 'Open reports on the same target.' }),
  complaint: z
    .object({
      id: z.string().meta({ description: 'cmp_…' }),
      status: ComplaintStatus,
      text: z.string(),
      filedAt: z.string(),
      reason: z.string().nullable(),
      action: ReportAction.nullable(),
      decisionId: z
        .string()
        .nullable()
        .meta({ description: 'The moderation (mod_…) or user action (act_…) an upheld complaint made.' }),
      decidedAt: z.string().nullable(),
    })
    .nullable()
    .meta({ description: "The reporter's complaint about a decision not to act (Art. 20 DSA), once filed." }),
  complaintOpenUntil: z.string().nullable().meta({
    description: 'A decision not to act: the reporter may complain until then (the appeal window after the decision).',
  }),
  complaintUrl: z.string().nullable().meta({
    description:
      'Shown by GET /reports/{id} only, while a complaint can be filed: the signed page where the reporter can file it.',
  }),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const ReportList = listOf(ReportView);
export const ReportData = dataOf(ReportView);
export const ReportAcknowledgement = dataOf(ReportView).extend({
  duplicate: z
    .boolean()
    .meta({ description: 'The reporter already had an open report on this target: this is that one, unchanged.' }),
});
