import { z } from 'zod';

/**
 * Webhook event names: Iffy's, `report.decided` (the outcome of a report, for its reporter),
 * `report.complaint_decided` (the outcome of the reporter's complaint about a decision not to act) and `rule.degraded`
 * (a rule's flags overturned by people past the tenant's threshold) and `hash.quarantined` (a bank hash that matched
 * past its bank's flood threshold, held for review).
 */
export const WebhookEventName = z.enum([
  'record.flagged',
  'record.compliant',
  'user.suspended',
  'user.compliant',
  'user.banned',
  'report.decided',
  'report.complaint_decided',
  'rule.degraded',
  'hash.quarantined',
]);
export type WebhookEventName = z.infer<typeof WebhookEventName>;

/**
 * Collection `webhook_endpoints`, written by the gateway only, read by the notifier.
 * Secrets are `whsec_<base64 of 24+ random bytes>`. During a rotation the old secret stays in `secrets` with
 * `expiresAt`; the notifier signs with every secret not yet expired.
 */
export interface WebhookEndpointDoc {
  _id: string; // `we_<ulid>`
  tenantId: string;
  url: string;
  description?: string;
  /** Empty: every event. */
  events: WebhookEventName[];
  enabled: boolean;
  secrets: Array<{ secret: string; createdAt: Date; expiresAt?: Date }>;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Collection `endpoint_states`, written by the notifier only (`_id` = endpoint id): delivery health. An endpoint the
 * notifier disabled (410 Gone, or failing continuously past the window) has `disabledAt` set; re-enabling goes
 * through an `EnableEndpoint` command.
 */
export interface EndpointStateDoc {
  _id: string;
  tenantId: string;
  failingSince?: Date;
  disabledAt?: Date;
  disabledReason?: 'gone' | 'failing';
  lastSuccessAt?: Date;
}

/** Commands from the gateway to the notifier on topic `webhookCommands`. Key: endpoint id. */
const base = { id: z.string(), tenantId: z.string(), issuedAt: z.string() };
export const WebhookCommand = z.discriminatedUnion('type', [
  z.object({ ...base, type: z.literal('RetryDelivery'), deliveryId: z.string() }),
  z.object({ ...base, type: z.literal('ReplayEndpoint'), endpointId: z.string(), since: z.string() }),
  z.object({ ...base, type: z.literal('EnableEndpoint'), endpointId: z.string() }),
]);
export type WebhookCommand = z.infer<typeof WebhookCommand>;
