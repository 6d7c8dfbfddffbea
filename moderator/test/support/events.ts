import type { DomainEvent } from '@vigil/proto';
import { monotonicFactory } from 'ulid';

const newId = monotonicFactory();

/** A `RecordUpserted` event of a stream of its own whose message is a little over `bytes` bytes, ids in order. */
export function sizedEvent(bytes: number): DomainEvent {
  const id = newId();
  return {
    id,
    tenantId: 'ten_1',
    stream: `record-rec_${id}`,
    version: 1,
    occurredAt: new Date().toISOString(),
    correlationId: 'c',
    type: 'RecordUpserted',
    data: { recordId: `rec_${id}`, clientId: 'x'.repeat(bytes), entity: 'post', passthrough: false },
  };
}
