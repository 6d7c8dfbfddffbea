// The moderator's own pieces of a retroaction's run: counts from zero, and the chunks of its selected record ids.
import type { RetroactionCounts } from '@vigil/proto';

export const zeroRetroactionCounts = (): RetroactionCounts => ({
  toFlagged: 0,
  toCompliant: 0,
  unchanged: 0,
  heldByHumans: 0,
  skipped: 0,
});

/** One chunk of a run's selected record ids (`COLLECTIONS.retroactionItems`, `_id`: `<jobId>#<n>`). */
export interface RetroactionItemsDoc {
  _id: string;
  jobId: string;
  ids: string[];
}
