import type { DomainEvent } from '@vigil/proto';
import type { Document } from 'mongodb';

/**
 * An event document: the envelope, `_id` equal to the event id (time-ordered ULID). `deadLetteredAt`: the broker
 * refused it and it was set aside instead (see DeadLetterStore). `published` is only on events stored before the
 * outbox collection existed (false until published); see outbox-migration.ts. `slot`: the outbox slot it was appended
 * in (see OutboxStore), absent on events of earlier releases.
 */
export type EventDoc = DomainEvent & { _id: string; published?: boolean; deadLetteredAt?: Date; slot?: string };

/** The envelope of a stored event: the document less its storage-only fields. */
export function eventOf(doc: Document): DomainEvent {
  const event: Document = { ...doc };
  delete event._id;
  delete event.published;
  delete event.deadLetteredAt;
  delete event.slot;
  return event as DomainEvent;
}
