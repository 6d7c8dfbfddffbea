import { ulid, type WebhookCommand } from '@vigil/proto';
import { ConflictError, NotFoundError } from '../../errors';
import type { RouteDeps } from '../deps';

type Deps = Pick<RouteDeps, 'commands' | 'topics' | 'webhooks'>;

/** Commands to the notifier, shared by the API and the console. Each returns the command id once Kafka has it. */
async function send(deps: Deps, key: string, command: WebhookCommand): Promise<string> {
  await deps.commands.send({
    topic: deps.topics.webhookCommands,
    key,
    id: command.id,
    type: command.type,
    value: command,
  });
  return command.id;
}

const base = (tenantId: string) => ({ id: ulid(), tenantId, issuedAt: new Date().toISOString() });

export async function retryDelivery(deps: Deps, tenantId: string, deliveryId: string): Promise<string> {
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
  return send(deps, delivery.endpointId, { ...base(tenantId), type: 'RetryDelivery', deliveryId: delivery._id });
}

export async function replayEndpoint(deps: Deps, tenantId: string, endpointId: string, since: Date): Promise<string> {
  const doc = await deps.webhooks.get(tenantId, endpointId);
  if (!doc) throw new NotFoundError('webhook endpoint not found');
  return send(deps, doc._id, {
    ...base(tenantId),
    type: 'ReplayEndpoint',
    endpointId: doc._id,
    since: since.toISOString(),
  });
}

export function enableEndpoint(deps: Deps, tenantId: string, endpointId: string): Promise<string> {
  return send(deps, endpointId, { ...base(tenantId), type: 'EnableEndpoint', endpointId });
}
