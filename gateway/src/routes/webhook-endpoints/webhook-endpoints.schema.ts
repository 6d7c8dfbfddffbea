import { z } from 'zod';
import { LIMITS, WebhookEventName } from '@vigil/proto';
import { dataOf, listOf, paging } from '../shared/paging.schema';

const EndpointUrl = z
  .url({ protocol: /^https?$/ })
  .max(LIMITS.url)
  .meta({ description: 'http(s) URL; its host must resolve to public addresses (or WEBHOOK_ALLOWED_CIDRS).' });

/** Events to receive, each at most once. */
const Events = z
  .array(WebhookEventName)
  .max(20)
  .refine((events) => new Set(events).size === events.length, { message: 'events must not repeat' });

export const CreateEndpointBody = z.strictObject({
  url: EndpointUrl,
  description: z.string().max(LIMITS.endpointDescription).optional(),
  events: Events.default([]).meta({ description: 'Events to receive, each at most once; empty: all.' }),
  enabled: z.boolean().default(true),
});

export const UpdateEndpointBody = z
  .strictObject({
    url: EndpointUrl.optional(),
    description: z.string().max(LIMITS.endpointDescription).optional(),
    events: Events.optional(),
    enabled: z.boolean().optional(),
  })
  .refine((patch) => Object.values(patch).some((value) => value !== undefined), { message: 'nothing to change' });

export const RotateSecretBody = z.strictObject({
  overlapSeconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 86400)
    .default(86400)
    .meta({ description: 'How long the previous secret keeps signing, seconds (default one day).' }),
});

export const ReplayBody = z.strictObject({
  since: z.iso.datetime({ offset: true }).meta({
    description:
      'Re-send the failed deliveries created since then; succeeded and pending ones are not sent again. Events that ' +
      'came while the endpoint was disabled have no delivery to re-send.',
  }),
});

export const ListQuery = z.object({ limit: paging.limit, starting_after: paging.starting_after });

export const EndpointView = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  events: z.array(WebhookEventName),
  enabled: z
    .boolean()
    .describe("The operator's switch: changed only by a create or PATCH, never by the notifier (see disabledAt)"),
  secret: z.string().optional().meta({ description: 'Only in the create response.' }),
  disabledAt: z
    .string()
    .nullable()
    .describe(
      "When the notifier disabled the endpoint (its receiver's health; enabled stays as set): events reach it only " +
        'while enabled is true and disabledAt is null. PATCH enabled: true clears it',
    ),
  disabledReason: z.enum(['gone', 'failing']).nullable(),
  failingSince: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const RotateSecretResponse = z.object({
  id: z.string(),
  secret: z.string(),
  previousSecretExpiresAt: z.string(),
});

export const DeletedResponse = z.object({ id: z.string(), deleted: z.literal(true) });
export const CommandAccepted = z.object({ message: z.literal('Accepted'), id: z.string() });
/** One attempt in the delivery log. */
const DeliveryAttemptView = z.object({
  at: z.string(),
  statusCode: z.number().int().optional(),
  error: z
    .string()
    .optional()
    .describe(
      'Why there was no HTTP answer: timeout, network_error, ssrf_refused, invalid_url, payload_unavailable, ' +
        'no_active_secret, or interrupted (the notifier making the attempt stopped before it recorded an outcome)',
    ),
  durationMs: z.number(),
  responseBody: z.string().optional().describe('The first KiB of the answer'),
});

/** A delivery of one webhook event to one endpoint (fields absent until they apply). */
const DeliveryView = z.object({
  id: z.string(),
  endpointId: z.string(),
  webhookId: z.string().describe('The webhook-id header: the same on every attempt of this event to any endpoint'),
  event: z.string(),
  subjectId: z.string().describe('The body’s id (a moderation or user action id)'),
  state: z.enum(['pending', 'sending', 'succeeded', 'failed']),
  attemptCount: z.number().int(),
  attempts: z.array(DeliveryAttemptView),
  dueAt: z.string().optional().describe('When the next attempt is due (pending only)'),
  lastAttemptAt: z.string().optional(),
  lastStatusCode: z.number().int().optional(),
  lastError: z.string().optional(),
  completedAt: z.string().optional(),
  body: z.string().optional().describe('The body sent, byte for byte (built at the first attempt)'),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const DeliveryList = listOf(DeliveryView);
export const EndpointData = dataOf(EndpointView);
export const EndpointList = listOf(EndpointView);
