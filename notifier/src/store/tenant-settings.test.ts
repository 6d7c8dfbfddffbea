import { DEFAULT_SETTINGS, TenantVersions } from '@vigil/proto';
import type { Db } from 'mongodb';
import { TenantSettingsReads } from './tenant-settings';

/** The `settings` collection in memory, counting its reads. */
function settingsDb(docs: Record<string, object>) {
  const reads: string[] = [];
  const db = {
    collection: () => ({
      findOne: ({ _id }: { _id: string }) => {
        reads.push(_id);
        const doc = docs[_id];
        return Promise.resolve(doc ? { _id, ...doc } : null);
      },
    }),
  } as unknown as Db;
  return { db, reads };
}

describe('tenant settings reads', () => {
  it('reads a tenant once while no newer configuration version is seen, and again for an event that carries one', async () => {
    const docs: Record<string, object> = { t1: { ...DEFAULT_SETTINGS, appealWindowDays: 200 } };
    const { db, reads } = settingsDb(docs);
    const settings = new TenantSettingsReads(db, new TenantVersions(), 60_000);
    expect((await settings.settingsOf('t1', 3)).appealWindowDays).toBe(200);
    expect((await settings.settingsOf('t1', 3)).appealWindowDays).toBe(200);
    expect((await settings.settingsOf('t1')).appealWindowDays).toBe(200);
    expect(reads).toEqual(['t1']);
    // A change through the API raised the version; the events of what follows carry it.
    docs.t1 = { ...DEFAULT_SETTINGS, appealWindowDays: 365 };
    expect((await settings.settingsOf('t1', 4)).appealWindowDays).toBe(365);
    // An older event's version never brings back what was read before.
    expect((await settings.settingsOf('t1', 3)).appealWindowDays).toBe(365);
    expect(reads).toEqual(['t1', 't1']);
  });

  it('reads again once the time to live has passed, and shares one read between concurrent misses', async () => {
    const { db, reads } = settingsDb({});
    const clock = { now: 1_000 };
    const settings = new TenantSettingsReads(db, new TenantVersions(), 5_000, () => clock.now);
    const [a, b] = await Promise.all([settings.settingsOf('t2', 1), settings.settingsOf('t2', 1)]);
    expect(a).toEqual(DEFAULT_SETTINGS);
    expect(b).toBe(a);
    clock.now += 4_999;
    await settings.settingsOf('t2', 1);
    expect(reads).toEqual(['t2']);
    clock.now += 1;
    await settings.settingsOf('t2', 1);
    expect(reads).toEqual(['t2', 't2']);
  });

  it('does not keep a failed read', async () => {
    let fail = true;
    const db = {
      collection: () => ({
        findOne: () => (fail ? Promise.reject(new Error('store down')) : Promise.resolve(null)),
      }),
    } as unknown as Db;
    const settings = new TenantSettingsReads(db, new TenantVersions(), 60_000);
    await expect(settings.settingsOf('t3', 1)).rejects.toThrow('store down');
    fail = false;
    expect(await settings.settingsOf('t3', 1)).toEqual(DEFAULT_SETTINGS);
  });
});
