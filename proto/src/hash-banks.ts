import { z } from 'zod';
import { PolicyGrounds } from './policies';

/**
 * Hash banks (docs/hash-banks.md): lists of hashes of known harmful (or, for a negative bank, known harmless) images
 * that every image a tenant's records carry is matched against. The moderator owns them; the gateway and the admin
 * CLI reach them through its gRPC API. These are the shapes and bounds both sides check.
 */

/** What a bank's hashes are: Meta's PDQ perceptual hash (near matches), or a digest of the exact bytes. */
export const HashKind = z.enum(['pdq', 'md5', 'sha256']);
export type HashKind = z.infer<typeof HashKind>;

/** What a match does: flag the record, or flag it and suspend its user. */
export const BankAction = z.enum(['flag', 'flag_and_suspend']);
export type BankAction = z.infer<typeof BankAction>;

/** A person's review of a hash: unreviewed, confirmed, or deconfirmed (judged wrong: it no longer matches). */
export const HashReview = z.enum(['unreviewed', 'confirmed', 'deconfirmed']);
export type HashReview = z.infer<typeof HashReview>;

export const HASH_BANK_LIMITS = {
  /** Banks per tenant. */
  banks: 50,
  /** A bank's name. */
  bankName: 100,
  /** A bank's description. */
  bankDescription: 1000,
  /** Hashes added by one import, and rows of its CSV. */
  importRows: 10_000,
  /** One import's CSV text, characters (its JSON body stays under the gateway's 1 MiB default). */
  importChars: 1_000_000,
  /** Metadata of one hash: keys, key length, value length (strings only, as HMA's files carry them). */
  metadataKeys: 20,
  metadataKeyLength: 40,
  metadataValueLength: 500,
  /** Hashes a list call answers at most. */
  page: 100,
  /**
   * Flood quarantine: the most matches a bank's threshold may allow in a window (each match counted in a window is a
   * small document until the window after it; IFTAS saw 4.29 matches in 100,000 images).
   */
  floodThreshold: 100_000,
  /** Flood quarantine: the shortest and the longest window, seconds (a minute, a week). */
  floodWindowMin: 60,
  floodWindowMax: 604_800,
  /** Matches held for one quarantined hash; later ones are counted, not kept. */
  heldMatches: 200,
} as const;

/** A bank's flood window when its threshold is set without one: an hour, seconds. */
export const DEFAULT_FLOOD_WINDOW_SECONDS = 3600;

/** HMA's default distance for PDQ matches (its `PDQ_CONFIDENT_MATCH_THRESHOLD`). */
export const DEFAULT_PDQ_DISTANCE = 31;
/** The largest match distance a PDQ bank may set (the index probes up to three bits a 16-bit chunk). */
export const MAX_PDQ_DISTANCE = 63;

/** A hash's metadata: string values, as HMA's CSV files carry them (a source, a case id, a label). */
export const HashMetadata = z
  .record(
    z.string().min(1).max(HASH_BANK_LIMITS.metadataKeyLength),
    z.string().max(HASH_BANK_LIMITS.metadataValueLength),
  )
  .refine((value) => Object.keys(value).length <= HASH_BANK_LIMITS.metadataKeys, {
    message: `at most ${HASH_BANK_LIMITS.metadataKeys} metadata keys`,
  });
export type HashMetadata = z.infer<typeof HashMetadata>;

/**
 * The hashes of one fetched image, kept on the record's moderation and projection (never the image, and never for a
 * passthrough record): later steps (retroactive matching, a new bank) can match them without fetching again.
 */
export const ImageHashRecord = z.object({
  /** 1-based position among the record's image URLs. */
  position: z.number().int().positive(),
  md5: z.string(),
  sha256: z.string(),
  pdq: z.string().optional(),
  pdqQuality: z.number().int().min(0).max(100).optional(),
  /** Why the image has no PDQ hash. */
  pdqFailure: z.string().optional(),
});
export type ImageHashRecord = z.infer<typeof ImageHashRecord>;

/** A bank hash an image matched: the bank, the distance and the hash's metadata, as HMA users ask (#1827). */
export const HashMatchRecord = z.object({
  position: z.number().int().nonnegative(),
  bankId: z.string(),
  bankName: z.string(),
  kind: HashKind,
  distance: z.number().int().nonnegative(),
  hashId: z.string(),
  metadata: z.record(z.string(), z.string()),
  action: BankAction,
  policyId: z.string().optional(),
  /** On a cancelled match: the negative bank's hash that covers it. */
  cancelledBy: z.string().optional(),
  /** The hash is in flood quarantine: the match is held for review and does not act. */
  quarantined: z.boolean().optional(),
});
export type HashMatchRecord = z.infer<typeof HashMatchRecord>;

/**
 * A record flagged by the match of a `flag_and_suspend` bank: while the record stays flagged, its user is suspended
 * whatever their flagged count. `grounds`: the bank's policy, which the user's statement of reasons rests on.
 */
export const BankSuspension = z.object({
  bankId: z.string(),
  bankName: z.string(),
  hashId: z.string(),
  grounds: PolicyGrounds.optional(),
});
export type BankSuspension = z.infer<typeof BankSuspension>;
