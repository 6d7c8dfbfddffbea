import { z } from 'zod';
import {
  AutomatedDecision,
  DecisionAccount,
  DecisionMonetary,
  DecisionVisibility,
  ReportCategory,
  Via,
} from '@vigil/proto';

/** A statement of reasons (Art. 17 DSA) as the API shows it; TDB field values where the TDB has one. */
const StatementView = z
  .object({
    id: z.string().meta({ description: '`sor_` and the decision event id (the event id is the TDB `puid`).' }),
    eventId: z.string(),
    kind: z.enum(['restriction', 'reversal', 'complaint']).meta({
      description: "A restriction imposed, one lifted, or the decision on a reporter's complaint (Art. 20(5) DSA).",
    }),
    decisionId: z
      .string()
      .meta({ description: 'The moderation id (`mod_…`), user action id (`act_…`) or complaint id (`cmp_…`).' }),
    subject: z.object({ type: z.enum(['record', 'user']), id: z.string() }),
    userId: z.string().optional(),
    decidedAt: z.string().meta({ description: 'When the decision applied (TDB `application_date`).' }),
    restriction: z.object({
      visibility: z.array(DecisionVisibility).optional(),
      account: DecisionAccount.optional(),
      monetary: DecisionMonetary.optional(),
      endDate: z.null().meta({ description: 'Restrictions last until a later decision lifts them.' }),
    }),
    ground: z
      .enum(['DECISION_GROUND_ILLEGAL_CONTENT', 'DECISION_GROUND_INCOMPATIBLE_CONTENT'])
      .optional()
      .meta({ description: 'The ground relied on; absent for a rejected complaint, which restricts nothing.' }),
    legalGround: z.string().optional(),
    explanation: z.string(),
    referenceUrl: z.string().optional(),
    policy: z
      .object({ id: z.string(), name: z.string() })
      .optional()
      .meta({ description: 'The policy relied on; absent for a rejected complaint, like the ground.' }),
    category: ReportCategory,
    facts: z.string().meta({ description: 'Facts and circumstances; never content, names, emails or URLs.' }),
    source: z.enum([
      'SOURCE_ARTICLE_16',
      'SOURCE_TRUSTED_FLAGGER',
      'SOURCE_TYPE_OTHER_NOTIFICATION',
      'SOURCE_VOLUNTARY',
    ]),
    reportId: z.string().optional(),
    complaint: z
      .object({
        id: z.string(),
        outcome: z.enum(['Upheld', 'Rejected']),
        actionDecisionId: z
          .string()
          .optional()
          .meta({ description: 'Upheld: the moderation or user action made, with its own restriction statement.' }),
      })
      .optional(),
    automatedDetection: z.boolean(),
    automatedDecision: AutomatedDecision,
    via: Via,
    redress: z.object({
      appealUrl: z.string().nullable().meta({ description: "The user's appeal page, while one can be linked." }),
      appealWindowDays: z.number().int(),
      appealOpenUntil: z.string(),
      otherRoutes: z.string(),
    }),
  })
  .meta({ id: 'Statement' });

export const StatementList = z.object({
  data: z.array(StatementView),
  has_more: z
    .boolean()
    .meta({ description: 'Per user: more flagged records than the 50 whose statements are listed.' }),
});
