import { untilDone } from '@vigil/proto/platform';
import type { ModeratorModule, SharedParts } from '../shared-parts';
import { TransparencyCounter } from './transparency-counter';

/**
 * The transparency report's counters (`transparency_counts`), added to after each commit. Reads no variable of its
 * own.
 */
export async function transparencyModule({ log, db, registry }: SharedParts): Promise<ModeratorModule> {
  const counter = new TransparencyCounter(db, log.child({ component: 'transparency-counts' }), registry);
  await untilDone(log, 'transparency count indexes', () => counter.ensureIndexes());
  return {
    name: 'transparency-counts',
    reactions: [
      {
        name: 'transparency-counts',
        // Notices received and decided, restrictions imposed and lifted, complaints, and reviews of automated flags.
        applicableEvents: [
          'RecordModerated',
          'UserStatusChanged',
          'AppealCreated',
          'AppealDecided',
          'ReportReceived',
          'ReportDecided',
          'ReportComplaintFiled',
          'ReportComplaintDecided',
        ],
        react: (events) => counter.count(events),
      },
    ],
  };
}
