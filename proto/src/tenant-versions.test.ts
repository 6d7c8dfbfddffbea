import { parseConfigVersion, TenantVersions, VersionedCache } from './tenant-versions';

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

describe('parseConfigVersion', () => {
  it.each([
    ['12', 12],
    ['0', 0],
    ['', undefined],
    ['-1', undefined],
    ['1e3', undefined],
    ['1234567890123456', undefined],
    [undefined, undefined],
    [Buffer.from('7'), undefined],
  ])('reads %p as %p', (value, expected) => {
    expect(parseConfigVersion(value)).toBe(expected);
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
});
