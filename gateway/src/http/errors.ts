/**
 * The gateway's one error family. Code throws by meaning; `error-handler.ts` turns any of these into the JSON envelope
 * `{ error: { code, message, details?, requestId } }` with the status below. Codes are part of the public contract.
 */
export abstract class AppError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;
  /** Trying again later may succeed. */
  readonly retriable: boolean = false;
  /** Extra response headers (e.g. `Retry-After`). */
  headers?: Record<string, string>;

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
  readonly status = 400;
  constructor(
    message: string,
    readonly issues: Issue[],
  ) {
    super(message, issues);
  }
}
export class InvalidJsonError extends AppError {
  readonly code = 'invalid_json';
  readonly status = 400;
}
export class UnauthorizedError extends AppError {
  readonly code = 'unauthorized';
  readonly status = 401;
}
export class ForbiddenError extends AppError {
  readonly code = 'forbidden';
  readonly status = 403;
}
export class NotFoundError extends AppError {
  readonly code = 'not_found';
  readonly status = 404;
}
export class MethodNotAllowedError extends AppError {
  readonly code = 'method_not_allowed';
  readonly status = 405;
}
export class ConflictError extends AppError {
  readonly code = 'conflict';
  readonly status = 409;
}
/** A per-tenant quota is used up (e.g. webhook endpoints); `details.limit` says how many are allowed. */
export class LimitExceededError extends AppError {
  readonly code = 'limit_exceeded';
  readonly status = 409;
}
/** A rule set uses `prompt` strategies while the deployment has no LLM for them (PROMPT_RULES_ENABLED=false). */
export class PromptRulesDisabledError extends AppError {
  readonly code = 'prompt_rules_disabled';
  readonly status = 400;
}
/** A payments key is sent while the deployment has no SECRETS_ENCRYPTION_KEY to seal it with. */
export class PaymentsNotConfiguredError extends AppError {
  readonly code = 'payments_not_configured';
  readonly status = 400;
}
export class PayloadTooLargeError extends AppError {
  readonly code = 'payload_too_large';
  readonly status = 413;
}
export class UnsupportedMediaTypeError extends AppError {
  readonly code = 'unsupported_media_type';
  readonly status = 415;
}
export class RateLimitedError extends AppError {
  readonly code = 'rate_limited';
  readonly status = 429;
  override readonly retriable = true;
}
export class UnavailableError extends AppError {
  readonly code = 'unavailable';
  readonly status = 503;
  override readonly retriable = true;
}
export class TimeoutError extends AppError {
  readonly code = 'timeout';
  readonly status = 504;
  override readonly retriable = true;
}
export class InternalError extends AppError {
  readonly code = 'internal';
  readonly status = 500;
}
