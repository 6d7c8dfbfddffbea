import type { HashMatchRecord, ImageHashRecord, ImageJudgement, RecordStatus } from '@vigil/proto';
import type { RuleSet } from '@vigil/proto/rules';
import type { ImageHashes } from './images/image-hashes';

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
  /** The record judged, when there is one: a flood quarantine holds its bank matches by it. */
  recordId?: string;
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
  /** The hashes of the images fetched for the tenant's hash banks; absent when none were. */
  imageHashes?: ImageHashRecord[];
  /** The images' bank matches (reason `hash`), those a negative bank cancelled included (`cancelledBy`). */
  hashMatches?: HashMatchRecord[];
}

/**
 * The tenant's hash banks as the engine sees them (hash-banks/bank-matcher.ts): every image fetched for a tenant with
 * an enabled bank is hashed once and matched before the classifier judges it.
 */
export interface BankMatcher {
  /** Whether the tenant has an enabled bank: only then are its records' images fetched and hashed for matching. */
  active(tenantId: string): Promise<boolean>;
  /** MD5, SHA-256 and PDQ of an image's bytes, off the event loop; undefined when its time budget ran out. */
  hash(tenantId: string, bytes: Uint8Array, signal?: AbortSignal): Promise<ImageHashes | undefined>;
  /**
   * The matches of the images' hashes in the tenant's enabled banks, cancelled and quarantined ones included. With a
   * record, each match counts towards its hash's flood threshold, and a quarantined hash's match is held for it.
   */
  match(tenantId: string, images: readonly ImageHashRecord[], of?: { recordId: string }): Promise<HashMatchRecord[]>;
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
