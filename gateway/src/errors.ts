/** Every error code the gateway answers with (the `code` of the error envelope). */
export type ErrorCode =
  | 'validation_error'
  | 'invalid_json'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | ComplaintRefusal
  | 'limit_exceeded'
  | 'prompt_rules_disabled'
  | 'payments_not_configured'
  | 'unknown_rule_version'
  | 'invalid_rule_set'
  | 'backtest_too_large'
  | 'backtest_running'
  | 'backtest_not_finished'
  | 'backtest_expired'
  | 'version_not_live'
  | 'retroaction_running'
  | 'secrets_not_configured'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'unavailable'
  | 'timeout'
  | 'internal';

/**
 * Why a reporter's complaint about a decision not to act is refused (409): the report is still open, it was acted on
 * (the affected user appeals instead), a complaint was filed already, or the appeal window after the decision closed.
 */
export const COMPLAINT_REFUSALS = [
  'report_not_decided',
  'report_actioned',
  'complaint_exists',
  'complaint_window_closed',
] as const;
export type ComplaintRefusal = (typeof COMPLAINT_REFUSALS)[number];

/**
 * The gateway's one error family. Code throws by meaning; only the edges translate: `http/error-handler.ts` gives each
 * code its HTTP status and the JSON envelope `{ error: { code, message, details?, requestId } }` (or the console's and
 * the appeal page's HTML). Codes are part of the public contract.
 */
export abstract class AppError extends Error {
  abstract readonly code: ErrorCode;
  /** Trying again later may succeed. */
  readonly retriable: boolean = false;

  constructor(
    message: string,
    readonly details?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export interface Issue {
  path: Array<string | number>;
  message: string;
  code?: string;
}

export class ValidationError extends AppError {
  readonly code = 'validation_error';
  constructor(
    message: string,
    readonly issues: Issue[],
  ) {
    super(message, issues);
  }
}
export class InvalidJsonError extends AppError {
  readonly code = 'invalid_json';
}
export class UnauthorizedError extends AppError {
  readonly code = 'unauthorized';
}
export class ForbiddenError extends AppError {
  readonly code = 'forbidden';
}
export class NotFoundError extends AppError {
  readonly code = 'not_found';
}
export class MethodNotAllowedError extends AppError {
  readonly code = 'method_not_allowed';
}
export class ConflictError extends AppError {
  readonly code = 'conflict';
}
/** See COMPLAINT_REFUSALS. */
export class ComplaintRefusedError extends AppError {
  constructor(
    readonly code: ComplaintRefusal,
    message: string,
    details?: unknown,
  ) {
    super(message, details);
  }
}
/** A per-tenant quota is used up (e.g. webhook endpoints); `details.limit` says how many are allowed. */
export class LimitExceededError extends AppError {
  readonly code = 'limit_exceeded';
}
/** A rule set uses `prompt` strategies while the deployment has no LLM for them (PROMPT_RULES_ENABLED=false). */
export class PromptRulesDisabledError extends AppError {
  readonly code = 'prompt_rules_disabled';
}
/** A payments key is sent while the deployment has no SECRETS_ENCRYPTION_KEY to seal it with. */
export class PaymentsNotConfiguredError extends AppError {
  readonly code = 'payments_not_configured';
}
/** A request names a rule set version the tenant does not have (in its body, where a 404 would name the route). */
export class UnknownRuleVersionError extends AppError {
  readonly code = 'unknown_rule_version';
}
/** A stored rule set version no longer passes today's checks (its budget, or prompt strategies without an LLM). */
export class InvalidRuleSetError extends AppError {
  readonly code = 'invalid_rule_set';
}
/** A backtest asks for more records or AI calls than this deployment allows one job; `details.limit` says how many. */
export class BacktestTooLargeError extends AppError {
  readonly code = 'backtest_too_large';
}
/** The tenant's running backtests are at their bound; `details.limit` says how many may run at once. */
export class BacktestRunningError extends AppError {
  readonly code = 'backtest_running';
}
/** A retroaction starts from a backtest that succeeded; this one is queued, running, failed or cancelled. */
export class BacktestNotFinishedError extends AppError {
  readonly code = 'backtest_not_finished';
}
/** The backtest's time to live passed: its prediction is no longer kept, so nothing can be applied from it. */
export class BacktestExpiredError extends AppError {
  readonly code = 'backtest_expired';
}
/** A retroaction applies the live version only: the backtest's version must have been promoted (and still be live). */
export class VersionNotLiveError extends AppError {
  readonly code = 'version_not_live';
}
/** Another retroaction of the tenant has not ended; `details.retroaction` names it. */
export class RetroactionRunningError extends AppError {
  readonly code = 'retroaction_running';
}
/** A tenant secret (the Transparency Database token) cannot be stored: no SECRETS_ENCRYPTION_KEY to seal it. */
export class SecretsNotConfiguredError extends AppError {
  readonly code = 'secrets_not_configured';
}
export class PayloadTooLargeError extends AppError {
  readonly code = 'payload_too_large';
}
export class UnsupportedMediaTypeError extends AppError {
  readonly code = 'unsupported_media_type';
}
export class RateLimitedError extends AppError {
  readonly code = 'rate_limited';
  override readonly retriable = true;
  /** The limit's state as response headers (`RateLimit-*`, `Retry-After`), set by the limiter that refused. */
  headers?: Record<string, string>;
}
export class UnavailableError extends AppError {
  readonly code = 'unavailable';
  override readonly retriable = true;
}
export class TimeoutError extends AppError {
  readonly code = 'timeout';
  override readonly retriable = true;
}
export class InternalError extends AppError {
  readonly code = 'internal';
}
