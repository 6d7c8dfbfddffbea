import type { DomainEvent } from '@vigil/proto';
import { withEnvelope, type PendingEvent } from './events';
import type { RecordCommand } from './record';

/** Gives pending events envelopes in order, as the store would (ids sort in append order). */
function stamp(stream: string, pending: PendingEvent[], fromVersion = 1): DomainEvent[] {
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

/**
 * Runs `commands` in order on a stream from nothing, as the store would (decide, stamp, evolve); returns the final
 * state, the events of the last command, and every event stamped (the n-th stored at second n of 2026-01-01).
 */
export function runStream<S extends { version: number }, C>(
  stream: string,
  decide: (state: S | null, command: C) => PendingEvent[],
  evolve: (state: S | null, event: DomainEvent) => S,
  commands: C[],
): { state: S | null; last: PendingEvent[]; events: DomainEvent[] } {
  let state: S | null = null;
  let last: PendingEvent[] = [];
  const events: DomainEvent[] = [];
  for (const command of commands) {
    last = decide(state, command);
    for (const event of stamp(stream, last, (state?.version ?? 0) + 1)) {
      state = evolve(state, event);
      events.push(event);
    }
  }
  return { state, last, events };
}

/** Alice's manual decision on a record, with its moderation id (one sent again with the same id is recorded once). */
export const manualModeration = (status: 'Compliant' | 'Flagged', moderationId: string): RecordCommand => ({
  type: 'ModerateRecordManually',
  moderationId,
  status,
  reason: 'reviewed',
  actor: 'alice',
});
