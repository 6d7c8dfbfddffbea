import { NotFoundError } from '../errors';
import { commandBase, sendWebhookCommand, type WebhookCommandDeps } from './send-webhook-command';

/** Asks the notifier to send an endpoint the events since a time again (API and console). */
export async function replayEndpoint(
  deps: WebhookCommandDeps,
  tenantId: string,
  endpointId: string,
  since: Date,
): Promise<string> {
  const doc = await deps.webhooks.get(tenantId, endpointId);
  if (!doc) throw new NotFoundError('webhook endpoint not found');
  return sendWebhookCommand(deps, doc._id, {
    ...commandBase(tenantId),
    type: 'ReplayEndpoint',
    endpointId: doc._id,
    since: since.toISOString(),
  });
}
