// Commands: gateway → moderator on the ingest topic. Their bounds are the API's (see UserData in events.ts).
import { z } from 'zod';
import { UserData, MetadataData as Metadata } from './events';
import { LIMITS, jsonBytes } from './limits';

const ContentInput = z.object({
  text: z.string().max(LIMITS.text),
  imageUrls: z.array(z.string().max(LIMITS.url)).max(LIMITS.imageUrls).default([]),
  externalUrls: z.array(z.string().max(LIMITS.url)).max(LIMITS.externalUrls).default([]),
});

export const IngestRecordData = z
  .object({
    clientId: z.string().max(LIMITS.clientId),
    clientUrl: z.string().max(LIMITS.url).optional(),
    name: z.string().max(LIMITS.name),
    entity: z.string().max(LIMITS.entity),
    content: ContentInput,
    metadata: Metadata.optional(),
    user: UserData.optional(),
  })
  .refine((record) => jsonBytes(record) <= LIMITS.recordBytes, {
    message: `the whole record is at most ${LIMITS.recordBytes} bytes as JSON`,
  });
export type IngestRecordData = z.infer<typeof IngestRecordData>;

const commandBase = {
  /** Command id: the moderator applies each id once. */
  id: z.string(),
  tenantId: z.string(),
  issuedAt: z.string(),
  correlationId: z.string(),
  /** The tenant's configuration version the gateway knew when it accepted the request (see TenantVersions). */
  configVersion: z.number().int().nonnegative().optional(),
  /**
   * True when the gateway had read `configVersion` from the store within its key cache's time to live: no change
   * answered before the request is newer (TenantVersions.confirm).
   */
  configConfirmed: z.boolean().optional(),
};

const IngestRecordCommand = z.object({
  ...commandBase,
  type: z.literal('IngestRecord'),
  data: IngestRecordData,
  /**
   * Decided by the gateway from the tenant's roll-out percentage: the id of the moderation to run, or null when the
   * sampling skipped the record (stored, moderated only if it is Flagged or its user Suspended). Absent on commands
   * from gateways older than the roll-out: moderated.
   */
  moderationId: z.string().max(64).nullable().optional(),
});
const DeleteRecordCommand = z.object({
  ...commandBase,
  type: z.literal('DeleteRecord'),
  data: z.object({ clientId: z.string().max(LIMITS.clientId) }),
});
const IngestUserCommand = z.object({
  ...commandBase,
  type: z.literal('IngestUser'),
  data: UserData.refine((user) => jsonBytes(user) <= LIMITS.recordBytes, {
    message: `the whole user is at most ${LIMITS.recordBytes} bytes as JSON`,
  }),
});

/** Moderate a stored record again with the current rules (bulk re-run); no-op when it is gone or passthrough. */
const RerunModerationCommand = z.object({
  ...commandBase,
  type: z.literal('RerunModeration'),
  data: z.object({ clientId: z.string().max(LIMITS.clientId), moderationId: z.string().max(64) }),
});

export const Command = z.discriminatedUnion('type', [
  IngestRecordCommand,
  DeleteRecordCommand,
  IngestUserCommand,
  RerunModerationCommand,
]);
export type Command = z.infer<typeof Command>;
