import type { DomainEvent } from '@vigil/proto';

/** A symbol key: it stays on the decoded event in memory and goes into no JSON or BSON written from it. */
const FIRST_READ = Symbol('firstRead');

type Marked = DomainEvent & { [FIRST_READ]?: true };

/**
 * Marks an event the events consumer reads for the first time: published once (no `vigil-replayed` header) and at
 * an offset past what its partition held when assigned to this consumer. Another notifier cannot have handled it, so
 * its webhooks may be sent before they are stored (see DeliveryIntake).
 */
export function markFirstRead(event: DomainEvent): void {
  (event as Marked)[FIRST_READ] = true;
}

/** Whether the event was marked read for the first time; an event not marked may have been handled before. */
export function isFirstRead(event: DomainEvent): boolean {
  return (event as Marked)[FIRST_READ] === true;
}
