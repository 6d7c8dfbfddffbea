import type { DomainEvent } from '@vigil/proto';
import type { Reaction } from '@vigil/proto/platform';
import type { Logger } from 'pino';
import type { RecordState } from '../../domain/record';
import type { RecordHashStore } from './record-hash-store';

/**
 * Keeps `record_image_hashes` after each commit: an automatic moderation that fetched images stores their hashes (one
 * write by `_id`, as the record's `imageHashes` change), a deleted record loses them. Other moderations write nothing:
 * the record keeps the hashes it had. A failed write is logged and counted, never thrown (the commit stands); the
 * record is then missed by passes until its next moderation with images.
 */
export function recordHashReaction(
  store: Pick<RecordHashStore, 'put' | 'remove'>,
  log: Logger,
  onFailure?: () => void,
): Reaction<DomainEvent> {
  return {
    name: 'record-image-hashes',
    applicableEvents: ['RecordModerated', 'RecordDeleted'],
    react: async (events) => {
      for (const event of events) {
        try {
          if (event.type === 'RecordDeleted') await store.remove(event.data.recordId);
          else if (event.type === 'RecordModerated' && event.data.via !== 'Manual' && event.data.imageHashes?.length)
            await store.put(event.tenantId, event.data.recordId, event.data.imageHashes);
        } catch (err) {
          onFailure?.();
          log.warn({ err, eventId: event.id, type: event.type }, 'record image hashes not written');
        }
      }
    },
  };
}

/**
 * The same copy written from a record folded again (rebuild-projections): its hashes when it keeps some, none once
 * deleted. So a rebuild also fills the copy for records moderated before it existed.
 */
export function recordHashRefill(store: Pick<RecordHashStore, 'put' | 'remove'>) {
  return async (record: RecordState): Promise<void> => {
    if (record.deleted) await store.remove(record._id);
    else if (record.imageHashes?.length && !record.passthrough)
      await store.put(record.tenantId, record._id, record.imageHashes);
  };
}
