import { z } from 'zod';

/**
 * Submission of statements of reasons to the Commission's DSA Transparency Database (Art. 24(5) DSA), opt-in per
 * tenant. The field names and values are the database's API (`resources/markdown/api-documentation.md` and
 * `app/Models/Statement.php` of digital-services-act/transparency-database). A submitted statement holds no personal
 * data: enumerations, dates, the policy's texts and facts scrubbed of addresses, links, handles and long numbers.
 */

/** `territorial_scope` values: the EU and EEA countries (`EuropeanCountriesService::EUROPEAN_COUNTRY_CODES`). */
const TDB_COUNTRY_CODES = [
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'ES',
  'FI',
  'FR',
  'GR',
  'HR',
  'HU',
  'IE',
  'IS',
  'IT',
  'LI',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'NO',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
] as const;
const TdbCountry = z.enum(TDB_COUNTRY_CODES);

/** `content_type` values (`Statement::CONTENT_TYPES`). `CONTENT_TYPE_OTHER` needs a `content_type_other` text. */
const TdbContentType = z.enum([
  'CONTENT_TYPE_APP',
  'CONTENT_TYPE_AUDIO',
  'CONTENT_TYPE_IMAGE',
  'CONTENT_TYPE_PRODUCT',
  'CONTENT_TYPE_SYNTHETIC_MEDIA',
  'CONTENT_TYPE_TEXT',
  'CONTENT_TYPE_VIDEO',
  'CONTENT_TYPE_OTHER',
]);
export type TdbContentType = z.infer<typeof TdbContentType>;

/** `account_type` values (`Statement::ACCOUNT_TYPES`). */
const TdbAccountType = z.enum(['ACCOUNT_TYPE_BUSINESS', 'ACCOUNT_TYPE_PRIVATE']);

/** The database's text limits, characters. */
export const TDB_LIMITS = {
  decisionFacts: 5000,
  ground: 500,
  explanation: 2000,
  other: 500,
  url: 500,
  puid: 500,
  /** Statements per `POST /api/v1/statements` call. */
  batch: 100,
} as const;

/** What the platform's statements say where Vigil does not know: the content's type and language, the account's type. */
const TdbDefaults = z.strictObject({
  /** `content_type` of every statement (a record judged with images adds `CONTENT_TYPE_IMAGE`). */
  contentType: z.array(TdbContentType).min(1).max(8).default(['CONTENT_TYPE_TEXT']),
  /** `content_type_other`, required when `contentType` has `CONTENT_TYPE_OTHER`. */
  contentTypeOther: z.string().trim().min(1).max(TDB_LIMITS.other).optional(),
  /** `content_language`: an uppercase ISO 639-1 code. */
  contentLanguage: z
    .string()
    .regex(/^[A-Z]{2}$/, 'an uppercase ISO 639-1 code')
    .optional(),
  accountType: TdbAccountType.optional(),
});
export type TdbDefaults = z.infer<typeof TdbDefaults>;

function noCredentials(url: URL): boolean {
  return !url.username && !url.password;
}

/** A tenant's submission settings, without the token. */
export const TdbSettings = z
  .strictObject({
    /**
     * The database's address: `https://transparency.dsa.ec.europa.eu` in production, or the sandbox's address the
     * Digital Services Coordinator gave. Connections to it pass the webhook address policy.
     */
    baseUrl: z
      .url({ protocol: /^https?$/ })
      .max(500)
      // Refinements run after a failed check too: an address `URL` cannot parse is left to the `url` check's issue.
      .refine((url) => !URL.canParse(url) || noCredentials(new URL(url)), 'no credentials in the address'),
    /** `territorial_scope` of every statement: EU/EEA country codes. */
    territorialScope: z
      .array(TdbCountry)
      .min(1)
      .max(TDB_COUNTRY_CODES.length)
      .refine((list) => new Set(list).size === list.length, 'each country once'),
    defaults: TdbDefaults.default({ contentType: ['CONTENT_TYPE_TEXT'] }),
  })
  .superRefine((settings, ctx) => {
    const { contentType, contentTypeOther } = settings.defaults;
    if (contentType.includes('CONTENT_TYPE_OTHER') !== (contentTypeOther !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['defaults', 'contentTypeOther'],
        message: 'given exactly when contentType has CONTENT_TYPE_OTHER',
      });
    }
  });
export type TdbSettings = z.infer<typeof TdbSettings>;

/**
 * Collection `tdb_configs`, written by the gateway only (`_id` = tenant id), read by the notifier. `sealed` is the
 * SecretBox of the token; `hint` is what the API shows of it.
 */
export interface TdbConfigDoc extends TdbSettings {
  _id: string;
  sealed: string;
  hint: string;
  /**
   * When submission was turned on (kept when the settings change): statements of decisions made since are submitted.
   * Absent on settings stored by an earlier release, where `updatedAt` stands for it.
   */
  enabledAt?: Date;
  updatedAt: Date;
}

/** From when a tenant's decisions are submitted (see TdbConfigDoc.enabledAt). */
export const tdbEnabledSince = (config: TdbConfigDoc): Date => config.enabledAt ?? config.updatedAt;

/** The SecretBox context of a tenant's database token. */
export const tdbTokenContext = (tenantId: string): string => `tdb:token:${tenantId}`;

/** One statement as `POST /api/v1/statements` takes it. */
export interface TdbStatement {
  decision_visibility?: string[];
  decision_monetary?: string;
  decision_account?: string;
  account_type?: string;
  decision_facts: string;
  decision_ground: string;
  decision_ground_reference_url?: string;
  illegal_content_legal_ground?: string;
  illegal_content_explanation?: string;
  incompatible_content_ground?: string;
  incompatible_content_explanation?: string;
  content_type: string[];
  content_type_other?: string;
  category: string;
  territorial_scope: string[];
  content_language?: string;
  content_date: string;
  application_date: string;
  source_type: string;
  automated_detection: 'Yes' | 'No';
  automated_decision: string;
  puid: string;
}

/** States of a submission; `pending` and `sending` are the queue's, the others final. */
export const TdbSubmissionState = z.enum(['pending', 'sending', 'submitted', 'failed', 'skipped']);
export type TdbSubmissionState = z.infer<typeof TdbSubmissionState>;

/** One call to the database that carried this statement (with up to 99 others). */
export interface TdbAttempt {
  at: Date;
  durationMs: number;
  /** Statements in the call. */
  batchSize: number;
  statusCode?: number;
  /**
   * `rejected` (422 for this statement), `duplicate_elsewhere` (another statement of the call was refused, none was
   * stored), `unauthorized`, `rate_limited`, `server_error`, `timeout`, `network_error`, `ssrf_refused`,
   * `token_unreadable`, `unexpected_status`, `processing_failed` (an answer the notifier could not process).
   */
  error?: string;
}

/**
 * Collection `tdb_submissions`, written by the notifier only: one document per submitted restricting decision event of
 * a tenant with submission on (`_id` derived from the event id), which is the delivery log the gateway serves. It is
 * written when the statement's first call has its answer; `payload` is exactly what is sent, without personal data.
 */
export interface TdbSubmissionDoc {
  _id: string;
  tenantId: string;
  eventId: string;
  statementId: string;
  subject: { type: 'record' | 'user'; id: string };
  payload: TdbStatement;
  /** `pending` (waiting for a retry), or final: `submitted`, `failed`, `skipped`. */
  state: TdbSubmissionState;
  attemptCount: number;
  attempts: TdbAttempt[];
  /** Why it was not sent: `not_configured` (no SECRETS_ENCRYPTION_KEY), `disabled` (the tenant turned it off). */
  skipReason?: string;
  /** The database's refusal, per field, when it refused this statement (the database's own messages). */
  rejection?: Record<string, string[]>;
  /** The database's id of the stored statement, when its answer gave one. */
  tdbUuid?: string;
  /** Stored by an earlier call whose answer was lost: the database said the puid exists. */
  alreadyStored?: boolean;
  lastError?: string;
  /** While pending: the retry (`tdb_retries`) that will carry it. */
  batchId?: string;
  /** While pending: when its next call is due. */
  dueAt?: Date;
  /** Queue fields of documents written by an earlier release, which queued each statement on its own. */
  due?: string;
  leaseUntil?: Date;
  leaseId?: string;
  submittedAt?: Date;
  completedAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}
