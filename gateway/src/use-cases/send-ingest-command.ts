import { ulid, type Command } from '@vigil/proto';
import type { Caller, UseCaseDeps } from './deps';

export type IngestDeps = Pick<UseCaseDeps, 'commands' | 'topics' | 'versions'>;

/**
 * Sends a command to the moderator on the ingest topic and resolves once Kafka acknowledged it: an accepted command
 * is durable. Commands about one record share a key, so they reach the moderator in order (users:
 * `tenant:user:clientId`). Keys stay short because `clientId` is bounded (LIMITS.clientId): kafkajs hashes a key in
 * time that grows with the square of its length.
 */
export function sendIngestCommand(
  deps: IngestDeps,
  caller: Caller,
  key: string,
  make: (base: Omit<Command, 'type' | 'data'>) => Command,
): Promise<void> {
  const { tenantId } = caller;
  // The configuration version known when the request was accepted: the moderator judges it with rules at least
  // that new, and stamps it on the events the notifier fans out.
  const configVersion = deps.versions.of(tenantId);
  const confirmed = deps.versions.isConfirmed(tenantId);
  const command = make({
    id: ulid(),
    tenantId,
    issuedAt: new Date().toISOString(),
    correlationId: caller.requestId,
    ...(configVersion > 0 || confirmed ? { configVersion } : {}),
    ...(confirmed ? { configConfirmed: true } : {}),
  });
  return deps.commands.send({ topic: deps.topics.ingest, key, id: command.id, type: command.type, value: command });
}
