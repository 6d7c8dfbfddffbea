import type { ContentData, RecordStatus, UserStatus, Via } from './events';
import type { ImageHashRecord } from './hash-banks';

/**
 * Projection documents, rebuilt from the events by the moderator (their only writer). The gateway reads them through
 * gRPC; the notifier reads them directly to fill webhook payloads. Ids: see ids.ts.
 */
export interface RecordDoc {
  _id: string; // rec_…
  tenantId: string;
  clientId: string;
  clientUrl?: string;
  /** Absent for passthrough records. */
  name?: string;
  entity: string;
  /** Absent for passthrough records. */
  content?: ContentData;
  protected: boolean;
  metadata?: Record<string, unknown>;
  userId?: string;
  passthrough: boolean;
  status?: RecordStatus;
  statusUpdatedAt?: Date;
  statusUpdatedVia?: Via;
  /** Latest moderation. */
  moderationId?: string;
  reasons: string[];
  rules: string[];
  /** A human decided the current status: automation leaves it alone. */
  manual: boolean;
  testMode: boolean;
  deleted: boolean;
  /** Version of the record stream this projection reflects. */
  version: number;
  /** Monotonic insertion order for cursor pagination (time-ordered id of the first event). */
  sort: string;
  createdAt: Date;
  updatedAt: Date;
  /** The hashes of the images the last automatic moderation fetched (never for a passthrough record). */
  imageHashes?: ImageHashRecord[];
}

export interface UserDoc {
  _id: string; // usr_…
  tenantId: string;
  clientId: string;
  clientUrl?: string;
  paymentsAccountId?: string;
  /** Absent when only seen in passthrough mode. */
  email?: string;
  name?: string;
  username?: string;
  protected: boolean;
  metadata?: Record<string, unknown>;
  status?: UserStatus;
  statusUpdatedAt?: Date;
  statusUpdatedVia?: Via;
  /** A human decided the current status: automation leaves it alone. */
  manual: boolean;
  version: number;
  sort: string;
  createdAt: Date;
  updatedAt: Date;
}
