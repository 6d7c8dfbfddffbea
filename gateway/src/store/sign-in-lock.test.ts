import { lockAddress } from './member-store';

describe('the address a sign-in lockout is kept for', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:3::1', '2001:db8:1:3::/64'],
    ['not an address', 'not an address'],
  ])('%s → %s', (ip, expected) => {
    expect(lockAddress(ip)).toBe(expected);
  });
});
