import { ulid, type WebhookCommand } from '@vigil/proto';
import type { UseCaseDeps } from './deps';

export type WebhookCommandDeps = Pick<UseCaseDeps, 'commands' | 'topics' | 'webhooks'>;

/**
 * Sends a command to the notifier (retry, replay, enable), keyed by the endpoint so that its commands apply in order.
 * Returns the command id once Kafka has it.
 */
export async function sendWebhookCommand(
  deps: WebhookCommandDeps,
  key: string,
  command: WebhookCommand,
): Promise<string> {
  await deps.commands.send({
    topic: deps.topics.webhookCommands,
    key,
    id: command.id,
    type: command.type,
    value: command,
  });
  return command.id;
}

/** The fields every webhook command of a tenant starts with. */
export const commandBase = (tenantId: string) => ({ id: ulid(), tenantId, issuedAt: new Date().toISOString() });
