import { z } from 'zod';

/** The longest period a report covers, days: a year (a leap year's). */
const MAX_PERIOD_DAYS = 366;

const DAY_MS = 86_400_000;

/** A real day of the calendar (`Date.parse` takes `2026-02-30` as 2 March). */
const isCalendarDay = (day: string): boolean =>
  !Number.isNaN(Date.parse(`${day}T00:00:00Z`)) && new Date(`${day}T00:00:00Z`).toISOString().startsWith(day);

const Day = z
  .string()
  .regex(/^(19|20|21)\d{2}-\d{2}-\d{2}$/, 'a day as YYYY-MM-DD (UTC), years 1900 to 2199')
  .refine(isCalendarDay, { message: 'not a calendar day' });

export const TransparencyReportQuery = z
  .object({
    from: Day.meta({ description: 'First day of the period (UTC), included.' }),
    to: Day.meta({
      description: `Day after the period (UTC), excluded: \`from=2026-01-01&to=2026-07-01\` is the first half of 2026. At most ${MAX_PERIOD_DAYS} days after \`from\`.`,
    }),
    format: z
      .enum(['json', 'csv'])
      .optional()
      .meta({ description: 'Overrides the `Accept` header: `csv` answers `text/csv`.' }),
  })
  .superRefine((query, ctx) => {
    // A day refused above is not compared.
    if (!isCalendarDay(query.from) || !isCalendarDay(query.to)) return;
    const days = (Date.parse(query.to) - Date.parse(query.from)) / DAY_MS;
    if (days < 1)
      ctx.addIssue({ code: 'custom', path: ['to'], message: '`to` is a day after `from` (it is excluded)' });
    else if (days > MAX_PERIOD_DAYS) {
      ctx.addIssue({ code: 'custom', path: ['to'], message: `the period is at most ${MAX_PERIOD_DAYS} days` });
    }
  });
export type TransparencyReportQuery = z.infer<typeof TransparencyReportQuery>;

const Count = z.number().int();
const ByKey = z.record(z.string(), Count);
const Median = z
  .number()
  .nullable()
  .meta({ description: 'Seconds, to two significant figures; null when nothing was decided.' });

export const TransparencyReport = z.object({
  period: z.object({
    from: z.string().meta({ description: 'First day, included.' }),
    to: z.string().meta({ description: 'Day after the last, excluded.' }),
    days: Count,
  }),
  notices: z
    .object({
      received: z.object({
        total: Count,
        bySource: z.object({ user: Count, trustedFlagger: Count }),
        byGround: ByKey.meta({
          description: 'What the reporter claimed: ILLEGAL_CONTENT (Art. 16) or INCOMPATIBLE_CONTENT.',
        }),
        byCategory: ByKey.meta({ description: 'Every `STATEMENT_CATEGORY_*`, zero included.' }),
      }),
      decided: z.object({
        total: Count,
        actioned: Count,
        noAction: Count,
        bySource: z.object({ user: Count, trustedFlagger: Count }),
        byCategory: ByKey,
        actionedByCategory: ByKey,
      }),
      medianSecondsToDecide: z.object({ all: Median, user: Median, trustedFlagger: Median }),
      actions: z
        .object({
          total: Count,
          bySource: ByKey.meta({
            description: 'SOURCE_ARTICLE_16, SOURCE_TRUSTED_FLAGGER, SOURCE_TYPE_OTHER_NOTIFICATION.',
          }),
          byRestriction: ByKey,
          byAutomatedDecision: ByKey,
        })
        .meta({ description: 'Restrictions imposed on reports: one per statement of reasons.' }),
    })
    .meta({ description: 'Reports (notices) from users and trusted flaggers: received, decided, acted on.' }),
  ownInitiative: z
    .object({
      total: Count,
      byGround: ByKey,
      byCategory: ByKey,
      byRestriction: ByKey.meta({
        description: 'Each restriction named (a suspension with payouts paused names two), so it may sum above total.',
      }),
      byAutomatedDecision: ByKey,
      automatedDetection: Count.meta({ description: 'Of total, those detected by automated means.' }),
    })
    .meta({ description: "Restrictions on the platform's own initiative (rules, AI, moderators), one per statement." }),
  complaints: z
    .object({
      received: z.object({
        total: Count,
        byKind: ByKey.meta({
          description:
            '`appeal`: a user against an account restriction; `report`: a reporter against a decision not to act.',
        }),
      }),
      decided: z.object({
        total: Count,
        upheld: Count.meta({ description: 'The decision complained of stands.' }),
        reversed: Count.meta({ description: 'It was undone.' }),
        byKind: ByKey,
      }),
      medianSecondsToDecide: Median,
      reversals: z
        .object({ total: Count, afterComplaint: Count, byModerator: Count, automatic: Count })
        .meta({ description: 'Restrictions lifted: after a complaint, by a moderator, or automatically.' }),
    })
    .meta({ description: 'Internal complaints (Art. 20) and the restrictions lifted.' }),
  automatedMeans: z
    .object({
      byAutomatedDecision: ByKey.meta({
        description: 'Every restriction (any source) by how automated its decision was.',
      }),
      automatedDetection: Count,
      reviews: z
        .object({ reviewed: Count, confirmed: Count, overturned: Count })
        .meta({ description: "People's decisions on automated flags and the suspensions they caused." }),
      accuracy: z.number().nullable().meta({ description: 'confirmed ÷ reviewed; null when nothing was reviewed.' }),
      errorRate: z.number().nullable().meta({ description: 'overturned ÷ reviewed; null when nothing was reviewed.' }),
    })
    .meta({ description: 'The use of automated means, and their accuracy from human reviews.' }),
});
export type TransparencyReport = z.infer<typeof TransparencyReport>;
