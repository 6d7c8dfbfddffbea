import { addressPolicy, checkLiteralHost, SsrfRefusedError } from './ssrf';

describe('addressPolicy', () => {
  const strict = addressPolicy([]);
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'IPv6 loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.10.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'IPv6 metadata'],
    ['fe80::1', 'IPv6 link-local'],
    ['fc00::1', 'unique-local'],
    ['100.64.0.1', 'CGNAT'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'IPv6 multicast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'IPv6 unspecified'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, as URL parsing writes it'],
    ['::169.254.169.254', 'IPv4-compatible metadata'],
    ['::a9fe:a9fe', 'IPv4-compatible metadata, as URL parsing writes it'],
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['::7f00:1', 'IPv4-compatible loopback, as URL parsing writes it'],
    ['::a00:1', 'IPv4-compatible private'],
    ['not-an-ip', 'garbage'],
  ])('refuses %s (%s)', (address) => {
    expect(strict.allowed(address)).toBe(false);
  });

  it.each([['93.184.215.14'], ['8.8.8.8'], ['2606:4700:4700::1111']])('allows public %s', (address) => {
    expect(strict.allowed(address)).toBe(true);
  });

  it('allows private addresses inside an allow-listed CIDR, and only those', () => {
    const policy = addressPolicy(['127.0.0.1/32', '10.0.0.0/8']);
    expect(policy.allowed('127.0.0.1')).toBe(true);
    expect(policy.allowed('10.200.0.1')).toBe(true);
    expect(policy.allowed('127.0.0.2')).toBe(false);
    expect(policy.allowed('192.168.0.1')).toBe(false);
  });

  it.each([['169.254.0.0/16'], ['169.254.169.254/32'], ['fd00::/8'], ['0.0.0.0/0'], ['::/0']])(
    'refuses the metadata addresses even when %s is allow-listed',
    (cidr) => {
      const policy = addressPolicy([cidr]);
      expect(policy.allowed('169.254.169.254')).toBe(false);
      expect(policy.allowed('fd00:ec2::254')).toBe(false);
      expect(policy.allowed('::ffff:169.254.169.254')).toBe(false);
    },
  );

  it('judges IPv4-compatible and IPv4-mapped literals as the IPv4 address they embed, allow-list included', () => {
    expect(strict.allowed('::8.8.8.8')).toBe(true);
    expect(strict.allowed('::ffff:8.8.8.8')).toBe(true);
    const policy = addressPolicy(['127.0.0.1/32']);
    expect(policy.allowed('::7f00:1')).toBe(true);
    expect(policy.allowed('::7f00:2')).toBe(false);
  });

  it('refuses IPv4-compatible literal URL hosts and URLs with credentials before connecting', () => {
    expect(() => checkLiteralHost(new URL('http://[::169.254.169.254]/latest'), strict)).toThrow(SsrfRefusedError);
    expect(() => checkLiteralHost(new URL('http://[::127.0.0.1]:9090/'), strict)).toThrow(SsrfRefusedError);
    expect(() => checkLiteralHost(new URL('https://user:pass@example.com/hook'), strict)).toThrow(SsrfRefusedError);
    expect(() => checkLiteralHost(new URL('https://user@example.com/hook'), strict)).toThrow(SsrfRefusedError);
  });

  it('refuses an IP literal URL host before connecting', () => {
    expect(() => checkLiteralHost(new URL('http://[::1]:8080/x'), strict)).toThrow(SsrfRefusedError);
    expect(() => checkLiteralHost(new URL('http://169.254.169.254/latest'), strict)).toThrow(SsrfRefusedError);
    expect(() => checkLiteralHost(new URL('https://example.com/hook'), strict)).not.toThrow();
  });
});
