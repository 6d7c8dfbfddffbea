import type { ImageJudgement, RecordStatus, RuleSet } from '@vigil/proto';

/** A human decision on the record, fed back to the model (Iffy's human feedback). */
export interface PriorDecision {
  status: RecordStatus;
  reason?: string;
}

/** What the engine judges: name, text and string metadata values (never persisted by the engine). */
export interface EngineInput {
  entity: string;
  name: string;
  text: string;
  imageUrls: string[];
  externalUrls: string[];
  metadata?: Record<string, unknown>;
  /** Whose content this is: prompt strategies bound their LLM calls per tenant. */
  tenantId?: string;
  /** The human decision standing on the record, if any: prompt strategies tell the LLM about it. */
  prior?: PriorDecision;
  /**
   * When the caller stops waiting for the answer (epoch milliseconds; a `/moderate` call's deadline): images are fetched
   * and judged in time for it, and one not done by then is a `timeout`. Absent for ingests.
   */
  deadline?: number;
}

export interface EngineResult {
  status: RecordStatus;
  /** One human-readable reason per match, e.g. "Content contains blocked word: X". Never the full content. */
  reasons: string[];
  /** Ids of the rules with at least one flagging strategy. */
  rules: string[];
  /** The images the bundled model judged (for an `images` strategy), with their class scores; absent when none. */
  images?: ImageJudgement[];
  /**
   * The text with the details that masking `pii` strategies found replaced by `[contact removed]`; absent when none
   * asked or none was found. Answered to the caller only: never stored, whatever the record's mode.
   */
  maskedText?: string;
}

/** Thrown when an external provider fails; `retriable` tells the caller whether to try again. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retriable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProviderError';
  }
}

export interface ModerationEngine {
  moderate(input: EngineInput, rules: RuleSet, signal?: AbortSignal): Promise<EngineResult>;
}
