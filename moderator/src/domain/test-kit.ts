import type { DomainEvent } from '@vigil/proto';
import { withEnvelope, type PendingEvent } from './events';

/** Gives pending events envelopes in order, as the store would (ids sort in append order). */
export function stamp(stream: string, pending: PendingEvent[], fromVersion = 1): DomainEvent[] {
  return pending.map((event, index) => {
    const version = fromVersion + index;
    return withEnvelope(event, {
      id: `01TEST${String(version).padStart(20, '0')}`,
      tenantId: 'ten_1',
      stream,
      version,
      occurredAt: new Date(Date.UTC(2026, 0, 1, 0, 0, version)).toISOString(),
      correlationId: 'corr',
    });
  });
}
