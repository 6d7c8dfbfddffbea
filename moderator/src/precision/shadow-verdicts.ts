/**
 * A shadow judgement of a record, kept so that a person's later decision can be compared with it (collection
 * `shadow_verdicts`, `_id` = record id): the shadow rules that ran, those that matched, under which version.
 */
export interface ShadowVerdictDoc {
  _id: string;
  tenantId: string;
  ruleSetVersion: number;
  ran: string[];
  flagged: string[];
  at: Date;
  /** The tenant's shadow version's verdict (a whole rule set version run in shadow), when it has one. */
  version?: { ruleSetVersion: number; ran: string[]; flagged: string[] };
}
