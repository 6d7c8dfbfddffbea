import { parseConfigVersion, TenantVersions } from './tenant-versions';

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
