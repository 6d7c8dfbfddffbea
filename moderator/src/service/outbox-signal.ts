import type { DomainEvent } from '@vigil/proto';

/**
 * Told of the events a commit appended, so that they are published without being read back from the store (the
 * outbox relay implements it). The use cases own this interface; it never throws.
 */
export interface OutboxSignal {
  appended(events: readonly DomainEvent[]): void;
}
