import { ConflictError, NotFoundError } from '../errors';
import { commandBase, sendWebhookCommand, type WebhookCommandDeps } from './send-webhook-command';

/** Asks the notifier to send a delivery again (API and console); refused when it could do nothing. */
export async function retryDelivery(deps: WebhookCommandDeps, tenantId: string, deliveryId: string): Promise<string> {
  const delivery = await deps.webhooks.getDelivery(tenantId, deliveryId);
  if (!delivery) throw new NotFoundError('delivery not found');
  // A deleted endpoint's deliveries stay in the log, but the notifier sends nothing for an endpoint it cannot find:
  // answered as every other operation on a deleted endpoint (its delivery log, replay), rather than a 202 that does
  // nothing.
  const endpoint = await deps.webhooks.get(tenantId, delivery.endpointId);
  if (!endpoint) {
    throw new NotFoundError(`webhook endpoint ${delivery.endpointId} of this delivery not found: it was deleted`, {
      endpointId: delivery.endpointId,
    });
  }
  // An endpoint switched off gets nothing: the notifier would fail the retry at once. Say so, and what to do. (One the
  // notifier disabled is not refused here: a re-enable queued just before reaches the notifier first.)
  if (endpoint.enabled === false) {
    throw new ConflictError(
      `webhook endpoint ${endpoint._id} is disabled: re-enable it (PATCH {"enabled": true}), then retry`,
      { endpointId: endpoint._id },
    );
  }
  // The notifier would not touch it while an attempt is under way: say so rather than accept a retry that does nothing.
  if (delivery.state === 'sending') {
    throw new ConflictError('the delivery is being sent right now: retry it once that attempt has ended');
  }
  return sendWebhookCommand(deps, delivery.endpointId, {
    ...commandBase(tenantId),
    type: 'RetryDelivery',
    deliveryId: delivery._id,
  });
}
