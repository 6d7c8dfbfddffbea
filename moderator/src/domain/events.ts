import type { DomainEvent, DomainEventType, EventOf } from '@vigil/proto';

/** An event a decision produced, before the store gives it an id, a version and a time. */
export type PendingEvent = { [T in DomainEventType]: { type: T; data: EventOf<T>['data'] } }[DomainEventType];

export interface Envelope {
  id: string;
  tenantId: string;
  stream: string;
  version: number;
  occurredAt: string;
  correlationId: string;
}

export function withEnvelope(pending: PendingEvent, envelope: Envelope): DomainEvent {
  return { ...envelope, ...pending };
}

/** How many recent command ids a stream remembers to drop redeliveries (commands of one key arrive in order). */
const RECENT_COMMANDS = 50;

export function rememberCommand(recent: readonly string[], commandId: string | undefined): string[] {
  if (!commandId) return [...recent];
  return [...recent, commandId].slice(-RECENT_COMMANDS);
}
