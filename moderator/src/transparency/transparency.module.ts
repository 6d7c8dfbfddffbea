import type { DomainEventType } from '@vigil/proto';
import { untilDone } from '@vigil/proto/platform';
import type { ReactingModule, SharedParts } from '../shared-parts';
import { TransparencyCounter } from './transparency-counter';

/** Notices received and decided, restrictions imposed and lifted, complaints, and reviews of automated flags. */
export const TRANSPARENCY_EVENTS = [
  'RecordModerated',
  'UserStatusChanged',
  'AppealCreated',
  'AppealDecided',
  'ReportReceived',
  'ReportDecided',
  'ReportComplaintFiled',
  'ReportComplaintDecided',
] as const satisfies readonly DomainEventType[];

/**
 * The transparency report's counters (`transparency_counts`), added to after each commit. Reads no variable of its
 * own.
 */
export async function transparencyModule({ log, db, registry }: SharedParts): Promise<ReactingModule> {
  const counter = new TransparencyCounter(db, log.child({ component: 'transparency-counts' }), registry);
  await untilDone(log, 'transparency count indexes', () => counter.ensureIndexes());
  return {
    name: 'transparency-counts',
    reactions: [
      {
        name: 'transparency-counts',
        applicableEvents: TRANSPARENCY_EVENTS,
        react: (events) => counter.count(events),
      },
    ],
  };
}
