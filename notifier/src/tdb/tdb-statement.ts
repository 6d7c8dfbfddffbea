import {
  isRestriction,
  TDB_LIMITS,
  type GroundedStatement,
  type Statement,
  type TdbSettings,
  type TdbStatement,
} from '@vigil/proto';

/**
 * A statement of reasons in the Transparency Database's form (the settings and document shapes are contracts in
 * `@vigil/proto`): restrictions only, with facts and explanations scrubbed of personal data and clipped to its limits.
 */

const EMAIL = /[^\s@]+@[^\s@]+\.[^\s@]+/g;
const LINK = /\b(?:[a-z][a-z0-9+.-]*:\/\/|www\.)\S+/gi;
const HANDLE = /(^|[\s(])@[A-Za-z0-9_.]{2,}/g;
const LONG_NUMBER = /\+?\d[\d\s().-]{5,}\d/g;

/**
 * Text without what could identify a person: email addresses, links, @handles and long numbers (phone, account or
 * card numbers) are replaced by a word in brackets. Engine reasons never hold matched content (see statements.ts);
 * this covers what a moderator typed.
 */
export function scrubPersonalData(text: string): string {
  return text
    .replace(EMAIL, '[email]')
    .replace(LINK, '[link]')
    .replace(HANDLE, '$1[handle]')
    .replace(LONG_NUMBER, '[number]');
}

function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

const day = (iso: string): string => iso.slice(0, 10);

/**
 * Whether a statement goes to the database: restrictions only (a lifted restriction is not a statement of reasons, and a
 * complaint's decision is not one either), each with the ground and policy the database requires.
 */
export const submitsToTdb = (statement: Statement): statement is GroundedStatement => isRestriction(statement);

/**
 * The database's form of a statement of reasons. `hasImages`: the record was judged with images. The `puid` is the
 * decision event's id, so a statement sent twice is refused as a duplicate rather than stored twice.
 */
export function tdbStatementOf(
  statement: GroundedStatement,
  settings: Pick<TdbSettings, 'territorialScope' | 'defaults'>,
  options: { hasImages?: boolean } = {},
): TdbStatement {
  const { restriction } = statement;
  const contentType = new Set<string>(settings.defaults.contentType);
  if (options.hasImages) contentType.add('CONTENT_TYPE_IMAGE');
  const explanation = clip(scrubPersonalData(statement.explanation), TDB_LIMITS.explanation);
  const illegal = statement.ground === 'DECISION_GROUND_ILLEGAL_CONTENT';
  const referenceUrl =
    statement.referenceUrl !== undefined && statement.referenceUrl.length <= TDB_LIMITS.url
      ? statement.referenceUrl
      : undefined;
  const date = day(statement.decidedAt);
  return {
    ...(restriction.visibility ? { decision_visibility: [...restriction.visibility] } : {}),
    ...(restriction.monetary ? { decision_monetary: restriction.monetary } : {}),
    ...(restriction.account ? { decision_account: restriction.account } : {}),
    ...(settings.defaults.accountType ? { account_type: settings.defaults.accountType } : {}),
    decision_facts: clip(scrubPersonalData(statement.facts), TDB_LIMITS.decisionFacts),
    decision_ground: statement.ground,
    ...(referenceUrl !== undefined ? { decision_ground_reference_url: referenceUrl } : {}),
    ...(illegal
      ? {
          illegal_content_legal_ground: clip(statement.legalGround ?? statement.policy.name, TDB_LIMITS.ground),
          illegal_content_explanation: explanation,
        }
      : {
          incompatible_content_ground: clip(statement.policy.name, TDB_LIMITS.ground),
          incompatible_content_explanation: explanation,
        }),
    content_type: [...contentType],
    ...(settings.defaults.contentTypeOther !== undefined
      ? { content_type_other: settings.defaults.contentTypeOther }
      : {}),
    category: statement.category,
    territorial_scope: [...settings.territorialScope],
    ...(settings.defaults.contentLanguage ? { content_language: settings.defaults.contentLanguage } : {}),
    // Vigil's events do not carry when the content was posted; the decision's day is the latest it can have been.
    content_date: date,
    application_date: date,
    source_type: statement.source,
    automated_detection: statement.automatedDetection ? 'Yes' : 'No',
    automated_decision: statement.automatedDecision,
    puid: statement.eventId,
  };
}
