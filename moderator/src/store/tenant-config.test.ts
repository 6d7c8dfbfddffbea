import { TenantVersions } from '@vigil/proto';
import type { Db } from 'mongodb';
import pino from 'pino';
import { TenantConfigCache } from './tenant-config';

/** A store whose reads wait until the test settles them, in the order they were made (two per config read). */
function heldStore() {
  const reads: Array<{ resolve: (doc: null) => void; reject: (err: Error) => void }> = [];
  const db = {
    collection: () => ({
      findOne: () => new Promise<null>((resolve, reject) => reads.push({ resolve, reject })),
    }),
  };
  return { db: db as unknown as Db, reads };
}

describe('TenantConfigCache', () => {
  it("keeps a newer read's entry when an older read fails after it", async () => {
    const { db, reads } = heldStore();
    const versions = new TenantVersions();
    const cache = new TenantConfigCache(db, 60_000, pino({ level: 'silent' }), versions);
    const older = cache.get('ten_1');
    // A newer version is seen: the next get reads again, and that read answers first.
    versions.observe('ten_1', 2);
    const newer = cache.get('ten_1');
    expect(reads).toHaveLength(4);
    for (const read of reads.slice(2)) read.resolve(null);
    const config = await newer;
    for (const read of reads.slice(0, 2)) read.reject(new Error('connection reset'));
    await expect(older).rejects.toThrow();
    // The newer entry stands: no read, the same answer.
    expect(await cache.get('ten_1')).toBe(config);
    expect(reads).toHaveLength(4);
  });
});
