import type { DomainEvent } from '@vigil/proto';
import { parseMetadata } from './paging.schema';

/** The events of a stream as the moderator answers a `get…Events` call. */
type StoredEvents = { events: { id: string; type: string; version: number; occurredAt: string; dataJson: string }[] };

/** The stored events as the statement builder reads them (what it needs: id, type, time, data). */
export function eventsOf(tenantId: string, result: StoredEvents): DomainEvent[] {
  return result.events.map(
    (event) =>
      ({
        id: event.id,
        type: event.type,
        version: event.version,
        occurredAt: event.occurredAt,
        tenantId,
        stream: '',
        correlationId: '',
        data: parseMetadata(event.dataJson),
      }) as unknown as DomainEvent,
  );
}
