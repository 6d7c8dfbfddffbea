import { z } from 'zod';

/** Metadata limits (spec §8, Iffy's `isValidMetadata`), the same for records and users. */
export const METADATA_LIMITS = { maxKeys: 50, maxKeyLength: 40, maxValueLength: 500 } as const;

const tooDeep = Symbol('too deep');

/** The value's JSON text; `tooDeep` when nesting overflows the stack (a small body can nest thousands of levels). */
function serialise(value: unknown): string | undefined | typeof tooDeep {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (err instanceof RangeError) return tooDeep;
    throw err;
  }
}

/**
 * Free-form metadata. Each value counts by the length of its JSON text (Iffy's `isValidMetadata`, and what the
 * moderator checks again), so a string's quotes and escapes count too.
 */
export const Metadata = z
  .record(z.string(), z.unknown())
  .superRefine((metadata, ctx) => {
    const keys = Object.keys(metadata);
    if (keys.length > METADATA_LIMITS.maxKeys) {
      ctx.addIssue({ code: 'custom', message: `at most ${METADATA_LIMITS.maxKeys} keys (got ${keys.length})` });
    }
    for (const key of keys) {
      if (key.length < 1 || key.length > METADATA_LIMITS.maxKeyLength) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `keys are 1 to ${METADATA_LIMITS.maxKeyLength} characters`,
        });
      }
      if (key.includes('[') || key.includes(']')) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'keys may not contain [ or ]' });
      }
      const serialised = serialise(metadata[key]);
      if (serialised === tooDeep) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'value is nested too deeply' });
      } else if (serialised === undefined) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'value must be serialisable to JSON' });
      } else if (serialised.length > METADATA_LIMITS.maxValueLength) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `values are at most ${METADATA_LIMITS.maxValueLength} characters once serialised`,
        });
      }
    }
  })
  .meta({ description: 'Up to 50 keys of 1-40 characters without [ or ]; each value at most 500 characters as JSON.' });

const nonEmpty = z.string().min(1);

/** Content as an object. Unknown keys inside it are dropped (Iffy's behaviour). */
export const ContentObject = z.object({
  text: z.string(),
  imageUrls: z.array(z.url()).optional(),
  externalUrls: z.array(z.url()).optional(),
});

/** User fields (spec §2). `stripeAccountId` is Iffy's name for `paymentsAccountId` and is accepted as an alias. */
const userShape = {
  clientId: nonEmpty,
  clientUrl: z.url().optional(),
  paymentsAccountId: z.string().optional(),
  stripeAccountId: z.string().optional().meta({ deprecated: true, description: 'Alias of paymentsAccountId.' }),
  email: z.string().optional(),
  name: z.string().optional(),
  username: z.string().optional(),
  protected: z.boolean().optional(),
  metadata: Metadata.optional(),
};

function withoutAlias<T extends { stripeAccountId?: string; paymentsAccountId?: string }>(user: T) {
  const { stripeAccountId, ...rest } = user;
  const paymentsAccountId = rest.paymentsAccountId ?? stripeAccountId;
  return paymentsAccountId === undefined ? rest : { ...rest, paymentsAccountId };
}

/** Nested in a record: unknown keys are dropped. */
export const UserObject = z.object(userShape).transform(withoutAlias);
/** The body of `POST /ingest/user`: unknown keys are refused. */
export const UserBody = z.strictObject(userShape).transform(withoutAlias);
export type UserInput = z.output<typeof UserObject>;

export interface NormalisedContent {
  text: string;
  imageUrls: string[];
  externalUrls: string[];
}

const recordShape = {
  clientId: nonEmpty,
  clientUrl: z.url().optional(),
  name: nonEmpty,
  entity: nonEmpty,
  metadata: Metadata.optional(),
  user: UserObject.optional(),
  text: z.string().optional().meta({ deprecated: true, description: 'Legacy: use content.text.' }),
  fileUrls: z.array(z.url()).optional().meta({ deprecated: true, description: 'Legacy: use content.imageUrls.' }),
};

interface RawRecord {
  content?: string | z.output<typeof ContentObject>;
  text?: string;
  fileUrls?: string[];
}

/**
 * `content` (or legacy `text`) is required. Checked even when other fields failed (`when`), so that one response lists
 * every problem; the value may then be anything, hence the guard.
 */
const hasContent = (record: unknown): boolean => {
  if (typeof record !== 'object' || record === null) return true;
  const { content, text } = record as RawRecord;
  return content !== undefined || text !== undefined;
};
const contentRequired = { path: ['content'], message: 'content is required', when: () => true };

/** Iffy's legacy top-level `text` / `fileUrls` folded into `content`; an explicit `content` wins. */
function normalise<T extends RawRecord>(
  record: T,
): Omit<T, 'text' | 'fileUrls' | 'content'> & { content: NormalisedContent } {
  const { text, fileUrls, content, ...rest } = record;
  let normalised: NormalisedContent;
  if (typeof content === 'string') normalised = { text: content, imageUrls: [], externalUrls: [] };
  else if (content) {
    normalised = { text: content.text, imageUrls: content.imageUrls ?? [], externalUrls: content.externalUrls ?? [] };
  } else normalised = { text: text ?? '', imageUrls: fileUrls ?? [], externalUrls: [] };
  return { ...rest, content: normalised };
}

/** Moderate: content is a string or an object; unknown top-level keys are refused. */
export const ModerateBody = z
  .strictObject({
    ...recordShape,
    content: z.union([z.string(), ContentObject]).optional(),
    passthrough: z.boolean().optional().meta({ description: 'Moderate without storing name, content or user PII.' }),
  })
  .refine(hasContent, contentRequired)
  .transform(normalise);
export type ModerateBody = z.output<typeof ModerateBody>;

/** Ingest: content is an object; unknown top-level keys are refused. */
export const IngestBody = z
  .strictObject({ ...recordShape, content: ContentObject.optional() })
  .refine(hasContent, contentRequired)
  .transform(normalise);
export type IngestBody = z.output<typeof IngestBody>;

export const DeleteIngestBody = z.strictObject({ clientId: nonEmpty });
