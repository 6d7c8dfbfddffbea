import type { Collection } from 'mongodb';
import type { EventDoc } from './event-doc';
import { guarded } from './mongo-errors';
import type { OutboxStore } from './outbox-store';

/** Events moved per round from the previous release's outbox flag. */
const MIGRATE_CHUNK = 100;

/**
 * Events stored before the outbox collection existed carry `published: false` until published: each such event gets
 * its outbox copy, then loses the flag (an equality on the indexed flag, so a store with none costs one empty read).
 * Older moderators still running go on publishing their own appends and marking them; stop them before upgrading,
 * or restart the new ones after, so that what they left unpublished is moved too.
 */
export async function migrateLegacyOutbox(events: Collection<EventDoc>, outbox: OutboxStore): Promise<void> {
  for (;;) {
    const legacy = await guarded(() => events.find({ published: false }).limit(MIGRATE_CHUNK).toArray());
    if (legacy.length === 0) return;
    await outbox.restore(legacy);
    for (const doc of legacy) {
      await guarded(() => events.updateOne({ _id: doc._id }, { $unset: { published: '' } }));
    }
  }
}
