import { commandBase, sendWebhookCommand, type WebhookCommandDeps } from './send-webhook-command';

/** Tells the notifier an endpoint is enabled again: it clears the endpoint's disabled state. */
export function enableEndpoint(deps: WebhookCommandDeps, tenantId: string, endpointId: string): Promise<string> {
  return sendWebhookCommand(deps, endpointId, { ...commandBase(tenantId), type: 'EnableEndpoint', endpointId });
}
