import type { DomainEvent } from '@vigil/proto';
import { evolveRecord, type RecordState } from '../domain/record';
import { evolveReport, reportClaimKey, type ReportState } from '../domain/report';
import { evolveUser, type UserState } from '../domain/user';
import type { EventStore } from './event-store';

export interface RebuildReport {
  events: number;
  records: number;
  users: number;
  reports: number;
}

/**
 * Drops `records`, `users`, `appeals` and `reports` (with the claims of open reports) and folds every stream again
 * from `events`, then recounts each user's flagged records. Run it with the moderators stopped (or accept that writes during the rebuild are re-projected
 * on their stream's next write).
 */
export async function rebuildProjections(
  store: EventStore,
  /** Hears each record folded (the hash banks' copy of its image hashes is written again from it). */
  onRecord?: (state: RecordState) => Promise<void>,
): Promise<RebuildReport> {
  await store.dropProjections();

  const report: RebuildReport = { events: 0, records: 0, users: 0, reports: 0 };
  let stream: string | undefined;
  let events: DomainEvent[] = [];
  const flush = async () => {
    if (!stream || events.length === 0) return;
    // A rule's stream holds its RuleDegraded event only, a hash's its HashQuarantined events: nothing to project.
    if (stream.startsWith('rule-') || stream.startsWith('hash-')) return;
    if (stream.startsWith('record-')) {
      let state: RecordState | null = null;
      for (const event of events) state = evolveRecord(state, event);
      await store.projections.projectRecord(state);
      if (state && onRecord) await onRecord(state);
      report.records += 1;
    } else if (stream.startsWith('report-')) {
      let state: ReportState | null = null;
      for (const event of events) state = evolveReport(state, event);
      await store.projections.projectReport(state);
      if (state?.status === 'Open') {
        await store.reportClaims.claimReport(
          reportClaimKey(state.tenantId, state.reporter, state.targetId),
          state.tenantId,
          state._id,
        );
      }
      report.reports += 1;
    } else {
      let state: UserState | null = null;
      for (const event of events) state = evolveUser(state, event);
      await store.projections.projectUser(state, events);
      report.users += 1;
    }
  };

  for await (const event of store.streams.allEventsByStream()) {
    if (event.stream !== stream) {
      await flush();
      stream = event.stream;
      events = [];
    }
    events.push(event);
    report.events += 1;
  }
  await flush();

  for await (const { userId, count } of store.flagged.countFlaggedByUser())
    await store.flagged.setFlaggedCount(userId, count);
  return report;
}
