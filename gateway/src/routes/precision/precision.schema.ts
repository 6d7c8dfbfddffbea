import { z } from 'zod';

/** The longest window a precision report covers, days (four months of daily counters at most are read). */
const MAX_WINDOW_DAYS = 92;
/** The window when none is given: the last 30 days, today included. */
export const DEFAULT_WINDOW_DAYS = 30;

const Day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'a day as YYYY-MM-DD (UTC)')
  .refine(
    (day) =>
      !Number.isNaN(Date.parse(`${day}T00:00:00Z`)) && new Date(`${day}T00:00:00Z`).toISOString().startsWith(day),
    {
      message: 'not a calendar day',
    },
  );

export const PrecisionQuery = z
  .object({
    from: Day.optional().meta({
      description: `First day (UTC), included; default ${DEFAULT_WINDOW_DAYS - 1} days before \`to\`.`,
    }),
    to: Day.optional().meta({ description: 'Last day (UTC), included; default today.' }),
    version: z.coerce
      .number()
      .int()
      .min(0)
      .max(999_999_999)
      .optional()
      .meta({ description: 'Only this rule set version (0: the default set).' }),
    rule: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'a rule id')
      .optional()
      .meta({ description: 'Only this rule (its id); the series then follows it alone.' }),
  })
  .superRefine((query, ctx) => {
    // `to` defaults to today; a `from` without it is checked against today.
    if (!query.from) return;
    const to = query.to ?? new Date().toISOString().slice(0, 10);
    const days = (Date.parse(to) - Date.parse(query.from)) / 86_400_000 + 1;
    if (days < 1) ctx.addIssue({ code: 'custom', path: ['from'], message: '`from` is after `to`' });
    else if (days > MAX_WINDOW_DAYS) {
      ctx.addIssue({ code: 'custom', path: ['from'], message: `the window is at most ${MAX_WINDOW_DAYS} days` });
    }
  });
export type PrecisionQuery = z.infer<typeof PrecisionQuery>;

const counts = {
  flags: z.number().int().meta({ description: 'Automatic moderations the rule flagged.' }),
  reviewed: z.number().int().meta({ description: 'Human decisions on its flags.' }),
  confirmed: z.number().int().meta({ description: 'Decisions that kept the flag (or the suspension it caused).' }),
  overturned: z.number().int().meta({ description: 'Decisions that undid it.' }),
  precision: z.number().nullable().meta({ description: 'confirmed ÷ reviewed; null when nothing was reviewed.' }),
  overturnRate: z.number().nullable().meta({ description: 'overturned ÷ reviewed; null when nothing was reviewed.' }),
};

export const PrecisionReport = z.object({
  from: z.string(),
  to: z.string(),
  rules: z
    .array(
      z.object({
        ruleId: z.string(),
        ruleSetVersion: z.number().int(),
        name: z.string().optional().meta({ description: "The rule's name in that version." }),
        presetId: z.string().optional().meta({ description: 'A prompt rule added from a preset: the preset.' }),
        ...counts,
      }),
    )
    .meta({ description: 'Per rule and rule set version, over the window; most flags first.' }),
  presets: z
    .array(z.object({ presetId: z.string(), ruleSetVersion: z.number().int(), ...counts }))
    .meta({ description: 'Prompt rules added from a preset, summed per preset and version.' }),
  series: z
    .array(z.object({ day: z.string(), ...counts }))
    .meta({ description: 'Per day of the window with counts, oldest first: the selected rows summed.' }),
  shadow: z
    .array(
      z.object({
        ruleId: z.string(),
        ruleSetVersion: z.number().int(),
        runs: z.number().int().meta({ description: 'Records the shadow rule judged.' }),
        wouldFlag: z.number().int().meta({ description: 'Of those, the ones it would have flagged.' }),
        agreeLive: z.number().int().meta({ description: 'Its verdict matched the live result.' }),
        disagreeLive: z.number().int(),
        agreeHuman: z.number().int().meta({ description: "A person's later decision matched its verdict." }),
        disagreeHuman: z.number().int(),
      }),
    )
    .meta({ description: 'Shadow rules: run beside the live ones without acting; most runs first.' }),
  truncated: z
    .boolean()
    .meta({ description: 'More rows than the report holds (500): the ones with fewest flags left out.' }),
});
export type PrecisionReport = z.infer<typeof PrecisionReport>;
