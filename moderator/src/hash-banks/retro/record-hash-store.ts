import { createHash } from 'node:crypto';
import { COLLECTIONS, type ImageHashRecord } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';
import { guarded } from '../../store/mongo-errors';

/** Buckets a tenant's record hashes are spread over: a pass reads them one by one and resumes at the one it was in. */
export const RECORD_HASH_BUCKETS = 64;

/** What a pass compares of one image. */
type StoredImageHashes = Pick<ImageHashRecord, 'position' | 'md5' | 'sha256' | 'pdq'>;

export interface RecordHashDoc {
  /** The record's id. */
  _id: string;
  tenantId: string;
  /** `<tenantId>#<k>`: the one field a pass selects by (an equality FerretDB takes to the index). */
  bucket: string;
  images: StoredImageHashes[];
  at: Date;
}

/** The bucket of a record: a digest of its id, so that a tenant's records spread evenly over the buckets. */
export function bucketOf(recordId: string): number {
  return createHash('sha256').update(recordId).digest().readUInt32BE(0) % RECORD_HASH_BUCKETS;
}

export const bucketId = (tenantId: string, bucket: number): string => `${tenantId}#${bucket}`;

/**
 * `record_image_hashes`: the image hashes each record's last automatic moderation left (the record's `imageHashes`),
 * without the rest of the record, so that a retroactive pass reads about 200 bytes a record rather than its document.
 * Written after each commit that brings new hashes (one write by `_id`), removed with the record. It only finds
 * candidates: a pass checks each one against the record's stream before it acts, so a stale entry costs a read, never a
 * wrong flag.
 */
export class RecordHashStore {
  private readonly docs: Collection<RecordHashDoc>;

  constructor(
    db: Db,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.docs = db.collection(COLLECTIONS.recordImageHashes);
  }

  async ensureIndexes(): Promise<void> {
    await guarded(() => this.docs.createIndex({ bucket: 1 }, { name: 'bucket' }));
  }

  async put(tenantId: string, recordId: string, images: readonly ImageHashRecord[]): Promise<void> {
    const doc: RecordHashDoc = {
      _id: recordId,
      tenantId,
      bucket: bucketId(tenantId, bucketOf(recordId)),
      images: images.map(({ position, md5, sha256, pdq }) => ({ position, md5, sha256, ...(pdq ? { pdq } : {}) })),
      at: this.now(),
    };
    await guarded(() => this.docs.replaceOne({ _id: recordId }, doc, { upsert: true }));
  }

  async remove(recordId: string): Promise<void> {
    await guarded(() => this.docs.deleteOne({ _id: recordId }));
  }

  /**
   * The records of one of the tenant's buckets (an equality on `bucket`), read whole: about a 64th of the tenant's
   * records with images, so a pass holds one bucket in memory at a time and no cursor stays open while it is paced.
   */
  bucket(tenantId: string, bucket: number): Promise<RecordHashDoc[]> {
    return guarded(() => this.docs.find({ bucket: bucketId(tenantId, bucket) }).toArray());
  }
}
