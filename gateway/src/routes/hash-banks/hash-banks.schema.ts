import { z } from 'zod';
import {
  BankAction,
  DEFAULT_FLOOD_WINDOW_SECONDS,
  DEFAULT_PDQ_DISTANCE,
  HASH_BANK_LIMITS,
  HashKind,
  HashMetadata,
  HashReview,
  LIMITS,
  MAX_PDQ_DISTANCE,
} from '@vigil/proto';
import { dataOf } from '../shared/paging.schema';

const PolicyId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/)
  .meta({ description: "One of the tenant's policies (`GET /policies`): a match's statement of reasons rests on it." });
const Name = z.string().trim().min(1).max(HASH_BANK_LIMITS.bankName);
const Description = z.string().max(HASH_BANK_LIMITS.bankDescription);
const Distance = z
  .number()
  .int()
  .min(0)
  .max(MAX_PDQ_DISTANCE)
  .meta({ description: `PDQ banks: the largest Hamming distance that matches (default ${DEFAULT_PDQ_DISTANCE}).` });
const Flood = z
  .strictObject({
    threshold: z
      .number()
      .int()
      .min(1)
      .max(HASH_BANK_LIMITS.floodThreshold)
      .meta({ description: 'The most matches a hash may have in one window; the next one quarantines it.' }),
    windowSeconds: z
      .number()
      .int()
      .min(HASH_BANK_LIMITS.floodWindowMin)
      .max(HASH_BANK_LIMITS.floodWindowMax)
      .optional()
      .meta({
        description: `The window, seconds (default ${DEFAULT_FLOOD_WINDOW_SECONDS}; a PATCH keeps the bank's).`,
      }),
  })
  .meta({
    description:
      'Flood quarantine: a hash matching more often than this stops acting and is held for review (docs/hash-banks.md). Left out or null: off.',
  });
/** A hash as given: hex, either case; its length is checked against the bank's kind by the moderator. */
const HashText = z
  .string()
  .regex(/^[0-9a-fA-F]{32}([0-9a-fA-F]{32})?$/)
  .meta({ description: 'Hex: 64 digits for pdq and sha256, 32 for md5.' });

export const CreateHashBankBody = z.strictObject({
  name: Name,
  description: Description.optional(),
  kind: HashKind,
  distance: Distance.optional(),
  policy: PolicyId.optional(),
  action: BankAction.default('flag').meta({
    description: '`flag` the record, or `flag_and_suspend` its user as well.',
  }),
  negative: z.boolean().default(false).meta({
    description: 'A negative bank (an allowlist): its matches cancel the matches of the hashes they cover.',
  }),
  enabled: z.boolean().default(true),
  flood: Flood.optional(),
});
export type CreateHashBankBody = z.infer<typeof CreateHashBankBody>;

export const UpdateHashBankBody = z.strictObject({
  name: Name.optional(),
  description: Description.nullable().optional(),
  distance: Distance.optional(),
  policy: PolicyId.nullable().optional(),
  action: BankAction.optional(),
  negative: z.boolean().optional(),
  enabled: z.boolean().optional(),
  flood: Flood.nullable().optional(),
});
export type UpdateHashBankBody = z.infer<typeof UpdateHashBankBody>;

export const AddHashesBody = z.strictObject({
  hashes: z
    .array(z.strictObject({ hash: HashText, metadata: HashMetadata.optional() }))
    .min(1)
    .max(HASH_BANK_LIMITS.importRows),
});
export type AddHashesBody = z.infer<typeof AddHashesBody>;

export const ImportHashesBody = z.strictObject({
  csv: z
    .string()
    .min(1)
    .max(HASH_BANK_LIMITS.importChars)
    .meta({
      description:
        "HMA's hash file: one hash a row in the first column, optional metadata columns named by a header row " +
        '(`hash,source,case`); `#` comments and blank lines skipped. All rows or none are added.',
    }),
});
export type ImportHashesBody = z.infer<typeof ImportHashesBody>;

export const UpdateHashBody = z.strictObject({
  enabled: z.boolean().optional(),
  review: HashReview.optional().meta({ description: 'A deconfirmed hash no longer matches.' }),
  metadata: HashMetadata.optional(),
});
export type UpdateHashBody = z.infer<typeof UpdateHashBody>;

export const ListHashesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(HASH_BANK_LIMITS.page).default(20),
  starting_after: z.string().min(1).max(LIMITS.queryId).optional(),
});

export const LookupBody = z.union([
  z.strictObject({ kind: HashKind, hash: HashText }),
  z.strictObject({ imageUrl: z.url().max(LIMITS.url) }),
]);
export type LookupBody = z.infer<typeof LookupBody>;

export const HashBankView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  kind: HashKind,
  distance: z.number().int(),
  policy: z.string().nullable(),
  action: BankAction,
  negative: z.boolean(),
  enabled: z.boolean(),
  flood: z.object({ threshold: z.number().int(), windowSeconds: z.number().int() }).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type HashBankView = z.infer<typeof HashBankView>;

export const RetroPassView = z
  .object({
    id: z.string(),
    state: z.enum(['queued', 'running', 'succeeded', 'failed']),
    trigger: z
      .enum(['added', 'enabled', 'confirmed'])
      .meta({ description: 'Hashes added, or a hash enabled or reconfirmed again.' }),
    hashes: z.number().int().meta({ description: 'The hashes the pass matches.' }),
    scanned: z.number().int().meta({ description: 'Stored records whose image hashes were compared so far.' }),
    matched: z.number().int().meta({ description: 'Records with an image within the bank’s distance of a hash.' }),
    flagged: z.number().int().meta({ description: 'Records flagged, or whose flag gained the bank’s reason.' }),
    heldByHumans: z.number().int().meta({ description: 'Matched records left as a person decided them.' }),
    error: z
      .enum(['too_many_attempts'])
      .nullable()
      .meta({ description: 'Why a failed pass failed: each of its attempts stopped (an outage, a runner lost).' }),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
  })
  .meta({
    description: 'A retroactive pass: the bank’s new hashes matched against the image hashes of stored records.',
  });
export type RetroPassView = z.infer<typeof RetroPassView>;

export const HashBankDetail = HashBankView.extend({
  lastRetroPass: RetroPassView.nullable().meta({ description: 'The bank’s newest retroactive pass (null: none yet).' }),
});
export type HashBankDetail = z.infer<typeof HashBankDetail>;

export const BankHashView = z.object({
  id: z.string(),
  bank: z.string(),
  hash: z.string(),
  metadata: z.record(z.string(), z.string()),
  enabled: z.boolean(),
  review: HashReview,
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type BankHashView = z.infer<typeof BankHashView>;

export const HashMatchView = z.object({
  image: z.number().int().meta({ description: "1-based position among the record's image URLs (0: a bare hash)." }),
  bank: z.object({ id: z.string(), name: z.string() }),
  kind: HashKind,
  distance: z.number().int(),
  hashId: z.string(),
  metadata: z.record(z.string(), z.string()),
  action: BankAction,
  policy: z.string().nullable(),
  cancelledBy: z.string().optional().meta({ description: "The negative bank's hash that cancelled this match." }),
  quarantined: z
    .boolean()
    .optional()
    .meta({ description: 'The hash is in flood quarantine: the match is held for review and does not act.' }),
});
export type HashMatchView = z.infer<typeof HashMatchView>;

export const HashBankData = dataOf(HashBankView);
export const HashBankDetailData = dataOf(HashBankDetail);
export const HashBankList = z.object({ data: z.array(HashBankView) });
export const HashBankDeleted = z.object({ id: z.string(), deleted: z.literal(true) });
export const BankHashData = dataOf(BankHashView);
export const BankHashList = z.object({ data: z.array(BankHashView), has_more: z.boolean() });
export const HashesAdded = z.object({
  data: z.array(BankHashView),
  duplicates: z.number().int().meta({ description: 'Hashes the bank held already, left as they were.' }),
});
export const HashWithdrawn = z.object({ id: z.string(), withdrawn: z.literal(true) });
export const LookupResult = z.object({
  image: z
    .object({
      md5: z.string(),
      sha256: z.string(),
      pdq: z.string().nullable(),
      pdqQuality: z.number().int().nullable(),
    })
    .nullable()
    .meta({ description: "An image lookup: the fetched image's hashes (null for a hash lookup or a failed fetch)." }),
  matches: z.array(HashMatchView),
  cancelled: z.array(HashMatchView),
  failure: z.string().nullable().meta({ description: 'Why the image could not be fetched or hashed.' }),
});
export type LookupResult = z.infer<typeof LookupResult>;

export const HashQuarantineView = z.object({
  hashId: z.string(),
  bank: z.object({ id: z.string(), name: z.string() }),
  kind: HashKind,
  state: z
    .enum(['quarantined', 'released'])
    .meta({ description: '`released`: its held matches are still being applied.' }),
  quarantine: z.number().int().meta({ description: 'The how-manieth quarantine of this hash.' }),
  threshold: z.number().int(),
  windowSeconds: z.number().int(),
  count: z.number().int().meta({ description: 'Matches in the window when the hash passed the threshold.' }),
  held: z
    .number()
    .int()
    .meta({ description: `Matches held (at most ${HASH_BANK_LIMITS.heldMatches}).` }),
  overflow: z.number().int().meta({ description: 'Matches past the bound: counted, not held.' }),
  since: z.string(),
  metadata: z.record(z.string(), z.string()),
});
export type HashQuarantineView = z.infer<typeof HashQuarantineView>;
export const HashQuarantineList = z.object({ data: z.array(HashQuarantineView) });
export const QuarantineReleased = z.object({
  hashId: z.string(),
  released: z.literal(true),
  applied: z.number().int().meta({ description: 'Held matches applied to their records.' }),
  skipped: z
    .number()
    .int()
    .meta({ description: 'Held matches left: the record is gone, or a person decided its status.' }),
});
export const QuarantineDismissed = z.object({
  hashId: z.string(),
  dismissed: z.literal(true),
  dropped: z.number().int().meta({ description: 'Held matches dropped; the hash is disabled in its bank.' }),
});
