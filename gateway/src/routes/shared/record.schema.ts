import { z } from 'zod';
import { LIMITS, jsonBytes, metadataIssues } from '@vigil/proto';

/**
 * Free-form metadata, checked by the rules the moderator applies again (`metadataIssues`). Each value counts by the
 * length of its JSON text, so a string's quotes and escapes count too.
 */
export const Metadata = z
  .record(z.string(), z.unknown())
  .superRefine((metadata, ctx) => {
    for (const issue of metadataIssues(metadata)) {
      ctx.addIssue({
        code: 'custom',
        ...(issue.key !== undefined ? { path: [issue.key] } : {}),
        message: issue.message,
      });
    }
  })
  .meta({
    description:
      `Up to ${LIMITS.metadataKeys} keys of 1-${LIMITS.metadataKeyLength} characters without [, ] or . and not ` +
      `starting with $ (keys nested in values too); each value at most ${LIMITS.metadataValueLength} characters as ` +
      `JSON, nothing deeper than ${LIMITS.metadataDepth} levels in metadata. Updates merge into the stored map, which may hold at most ${LIMITS.metadataKeys} keys.`,
  });

const bounded = (max: number) => z.string().max(max);
const required = (max: number) => z.string().min(1).max(max);
const ClientId = required(LIMITS.clientId);
const Url = z.url().max(LIMITS.url);
const Text = bounded(LIMITS.text);

/** Content as an object. Unknown keys inside it are dropped (Iffy's behaviour). */
const ContentObject = z.object({
  text: Text,
  imageUrls: z.array(Url).max(LIMITS.imageUrls).optional(),
  externalUrls: z.array(Url).max(LIMITS.externalUrls).optional(),
});

/** User fields (spec §2). `stripeAccountId` is Iffy's name for `paymentsAccountId` and is accepted as an alias. */
const userShape = {
  clientId: ClientId,
  clientUrl: Url.optional(),
  paymentsAccountId: bounded(LIMITS.userField).optional(),
  stripeAccountId: bounded(LIMITS.userField)
    .optional()
    .meta({ deprecated: true, description: 'Alias of paymentsAccountId.' }),
  email: bounded(LIMITS.email).optional(),
  name: bounded(LIMITS.userField).optional(),
  username: bounded(LIMITS.userField).optional(),
  protected: z.boolean().optional(),
  metadata: Metadata.optional(),
};

function withoutAlias<T extends { stripeAccountId?: string; paymentsAccountId?: string }>(user: T) {
  const { stripeAccountId, ...rest } = user;
  const paymentsAccountId = rest.paymentsAccountId ?? stripeAccountId;
  return paymentsAccountId === undefined ? rest : { ...rest, paymentsAccountId };
}

/**
 * The whole record (or user) as JSON is bounded too, so that the event storing it stays far below Kafka's message
 * limit whatever mix of long fields it has. Checked once every field passed, so a field over its own bound is named.
 */
const wholeRecord = { message: `the whole record is at most ${LIMITS.recordBytes} bytes as JSON` };
const withinRecordBytes = (value: unknown): boolean => jsonBytes(value) <= LIMITS.recordBytes;

/** Nested in a record: unknown keys are dropped. */
const UserObject = z.object(userShape).transform(withoutAlias);
/** The body of `POST /ingest/user`: unknown keys are refused. */
export const UserBody = z
  .strictObject(userShape)
  .refine(withinRecordBytes, wholeRecord)
  .transform(withoutAlias)
  .meta({ description: `A user; at most ${LIMITS.recordBytes} bytes as JSON.` });
export type UserInput = z.output<typeof UserObject>;

export interface NormalisedContent {
  text: string;
  imageUrls: string[];
  externalUrls: string[];
}

const recordShape = {
  clientId: ClientId,
  clientUrl: Url.optional(),
  name: required(LIMITS.name),
  entity: required(LIMITS.entity),
  metadata: Metadata.optional(),
  user: UserObject.optional(),
  text: Text.optional().meta({ deprecated: true, description: 'Legacy: use content.text.' }),
  fileUrls: z
    .array(Url)
    .max(LIMITS.imageUrls)
    .optional()
    .meta({ deprecated: true, description: 'Legacy: use content.imageUrls.' }),
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
/** The same rule in the OpenAPI document: a record names `content`, or else the legacy `text`. */
const contentOrLegacyText = { anyOf: [{ required: ['content'] }, { required: ['text'] }] };
const contentDescription =
  'Required (the legacy top-level `text` may stand in for it; `content` wins when both are given).';

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
    content: z.union([Text, ContentObject]).optional().meta({ description: contentDescription }),
    passthrough: z.boolean().optional().meta({ description: 'Moderate without storing name, content or user PII.' }),
  })
  .refine(hasContent, contentRequired)
  .refine(withinRecordBytes, wholeRecord)
  .transform(normalise)
  .meta({ description: `A record; at most ${LIMITS.recordBytes} bytes as JSON.`, ...contentOrLegacyText });
export type ModerateBody = z.output<typeof ModerateBody>;

/** Ingest: content is an object; unknown top-level keys are refused. */
export const IngestBody = z
  .strictObject({ ...recordShape, content: ContentObject.optional().meta({ description: contentDescription }) })
  .refine(hasContent, contentRequired)
  .refine(withinRecordBytes, wholeRecord)
  .transform(normalise)
  .meta({ description: `A record; at most ${LIMITS.recordBytes} bytes as JSON.`, ...contentOrLegacyText });
export type IngestBody = z.output<typeof IngestBody>;

export const DeleteIngestBody = z.strictObject({ clientId: ClientId });
