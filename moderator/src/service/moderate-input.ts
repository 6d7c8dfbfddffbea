import type { UserData } from '@vigil/proto';
import type { RecordInput } from '../domain/record';

/** What a moderation is asked to judge and store: one record, from a Moderate call or an ingest command. */
export interface ModerateInput extends Omit<RecordInput, 'userId'> {
  tenantId: string;
  correlationId: string;
  user?: UserData;
  passthrough: boolean;
  /** Set for ingest commands: a command id is applied once. */
  commandId?: string;
  /**
   * Ingest roll-out (Iffy §4.8): false when the sampling skipped the record, which is then stored and moderated only
   * if it is Flagged or its user Suspended. Default true.
   */
  sampled?: boolean;
  /** Id for the moderation (the gateway's, so its answer names it); a fresh one by default. */
  moderationId?: string;
  /** The caller stopped waiting (gRPC deadline): the engine drops checks still queued for this record. */
  signal?: AbortSignal;
  /** When the caller stops waiting (epoch milliseconds): images are fetched and judged in time for the answer. */
  deadline?: number;
}
