import { TenantVersions, VersionedCache } from './tenant-versions';

describe('TenantVersions', () => {
  it('keeps the newest version seen per tenant and says when one is newer', () => {
    const versions = new TenantVersions();
    expect(versions.of('ten_a')).toBe(0);
    expect(versions.observe('ten_a', 3)).toBe(true);
    expect(versions.observe('ten_a', 2)).toBe(false);
    expect(versions.observe('ten_a', 3)).toBe(false);
    expect(versions.observe('ten_b', 1)).toBe(true);
    expect(versions.of('ten_a')).toBe(3);
    expect(versions.of('ten_b')).toBe(1);
  });

  it.each([undefined, null, 0, -1, 1.5, Number.NaN, 2 ** 60])('ignores %p as a version', (value) => {
    const versions = new TenantVersions();
    expect(versions.observe('ten_a', value)).toBe(false);
    expect(versions.of('ten_a')).toBe(0);
  });

  it('calls an entry read at an older version stale, and one read at the newest fresh', () => {
    const versions = new TenantVersions();
    expect(versions.fresh('ten_a', 0)).toBe(true);
    versions.observe('ten_a', 4);
    expect(versions.fresh('ten_a', 3)).toBe(false);
    expect(versions.fresh('ten_a', 4)).toBe(true);
    expect(versions.fresh('ten_b', 0)).toBe(true);
  });
});

describe('TenantVersions.confirm', () => {
  it('remembers when the known version was confirmed, and forgets it for a newer version', () => {
    const versions = new TenantVersions({ confirmedForMs: 1_000 });
    versions.confirm('ten_a', 3, 5_000);
    expect(versions.of('ten_a')).toBe(3);
    expect(versions.confirmedAt('ten_a', 3)).toBe(5_000);
    expect(versions.confirmedAt('ten_a', 2)).toBe(0);
    expect(versions.isConfirmed('ten_a', 6_000)).toBe(true);
    expect(versions.isConfirmed('ten_a', 6_001)).toBe(false);
    // An older version confirms nothing; an earlier time does not move the confirmation back.
    versions.confirm('ten_a', 2, 7_000);
    versions.confirm('ten_a', 3, 4_000);
    expect(versions.confirmedAt('ten_a', 3)).toBe(5_000);
    versions.observe('ten_a', 4);
    expect(versions.confirmedAt('ten_a', 3)).toBe(0);
    expect(versions.confirmedAt('ten_a', 4)).toBe(0);
    expect(versions.isConfirmed('ten_a', 5_000)).toBe(false);
  });

  it('confirms version 0 of a tenant that never changed its configuration', () => {
    const versions = new TenantVersions({ confirmedForMs: 1_000 });
    versions.confirm('ten_a', 0, 100);
    expect(versions.confirmedAt('ten_a', 0)).toBe(100);
    expect(versions.isConfirmed('ten_a', 600)).toBe(true);
  });

  it('never calls a version confirmed without confirmedForMs', () => {
    const versions = new TenantVersions();
    versions.confirm('ten_a', 1, 100);
    expect(versions.isConfirmed('ten_a', 100)).toBe(false);
  });

  it.each([undefined, null, -1, 1.5])('ignores %p as a confirmed version', (value) => {
    const versions = new TenantVersions();
    versions.confirm('ten_a', value, 100);
    expect(versions.confirmedAt('ten_a', 0)).toBe(0);
  });
});

describe('VersionedCache', () => {
  it('keeps at most maxTenants, dropping the least recently used first', async () => {
    const reads: string[] = [];
    const cache = new VersionedCache(
      new TenantVersions(),
      (tenantId) => {
        reads.push(tenantId);
        return Promise.resolve(tenantId.toUpperCase());
      },
      { ttlMs: 60_000, maxTenants: 2 },
    );
    await cache.get('a');
    await cache.get('b');
    await cache.get('a');
    await cache.get('c');
    expect(await cache.get('a')).toBe('A');
    await cache.get('b');
    expect(reads).toEqual(['a', 'b', 'c', 'b']);
  });

  it('reads again for a newer version, an ended time to live, or after a failed read', async () => {
    const clock = { now: 0 };
    let value = 1;
    let fail = false;
    const cache = new VersionedCache(
      new TenantVersions(),
      () => (fail ? Promise.reject(new Error('down')) : Promise.resolve(value)),
      { ttlMs: 1_000, now: () => clock.now },
    );
    expect(await cache.get('t', 1)).toBe(1);
    value = 2;
    expect(await cache.get('t', 1)).toBe(1);
    expect(await cache.get('t', 2)).toBe(2);
    value = 3;
    clock.now = 999;
    expect(await cache.get('t')).toBe(2);
    clock.now = 1_000;
    fail = true;
    await expect(cache.get('t')).rejects.toThrow('down');
    fail = false;
    expect(await cache.get('t')).toBe(3);
  });

  it('keeps a value past its time to live while its version is confirmed, not once a newer one is seen', async () => {
    const clock = { now: 0 };
    const versions = new TenantVersions();
    let reads = 0;
    const cache = new VersionedCache(versions, () => Promise.resolve(++reads), { ttlMs: 1_000, now: () => clock.now });
    versions.confirm('t', 2, 0);
    expect(await cache.get('t')).toBe(1);
    for (const now of [900, 1_800, 2_700]) {
      clock.now = now;
      versions.confirm('t', 2, now);
      expect(await cache.get('t')).toBe(1);
    }
    // Unconfirmed for the time to live: read again.
    clock.now = 3_700;
    expect(await cache.get('t')).toBe(2);
    // Confirmed, but a newer version is known: read again.
    versions.confirm('t', 3, 3_800);
    clock.now = 3_800;
    expect(await cache.get('t')).toBe(3);
  });
});
