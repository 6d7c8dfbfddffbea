import { endpointUrlGuard, type ResolveHost } from './endpoint-url';

const answers: Record<string, string[]> = {
  'hooks.example.com': ['93.184.215.14'],
  'v6.example.com': ['2606:4700:4700::1111'],
  'mixed.example.com': ['93.184.215.14', '10.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  localhost: ['127.0.0.1', '::1'],
  'compat.example.com': ['::a9fe:a9fe'],
};
const resolve: ResolveHost = (hostname) => {
  const found = answers[hostname];
  if (found) return Promise.resolve(found.map((address) => ({ address })));
  if (hostname.startsWith('aaaa')) return Promise.resolve([{ address: '93.184.215.14' }]);
  if (hostname === 'slow.example.com') return new Promise(() => undefined);
  if (hostname === 'invalid.example.com') return Promise.reject(Object.assign(new Error('x'), { code: 'EINVAL' }));
  if (hostname === 'broken.example.com') return Promise.reject(Object.assign(new Error('x'), { code: 'ESERVFAIL' }));
  return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
};

const outcome = async (
  guard: ReturnType<typeof endpointUrlGuard>,
  url: string,
  options?: Parameters<ReturnType<typeof endpointUrlGuard>['check']>[1],
) => {
  try {
    await guard.check(url, options);
    return 'accepted';
  } catch (err) {
    const { code, details } = err as { code: string; details?: Array<{ path: string[] }> };
    return code === 'validation_error' ? `${code} ${details?.[0]?.path.join('.')}` : code;
  }
};

describe('webhook URL check at registration', () => {
  const strict = endpointUrlGuard({ allowedCidrs: [], resolve, timeoutMs: 50 });
  it.each([
    ['https://hooks.example.com/vigil', 'accepted'],
    ['https://v6.example.com/vigil', 'accepted'],
    ['https://93.184.215.14/vigil', 'accepted'],
    ['http://127.0.0.1:8080/hook', 'validation_error url'],
    ['http://[::1]/hook', 'validation_error url'],
    ['http://localhost/hook', 'validation_error url'],
    ['http://10.1.2.3/hook', 'validation_error url'],
    ['http://192.168.0.10/hook', 'validation_error url'],
    ['http://169.254.169.254/latest/meta-data', 'validation_error url'],
    ['http://[fd00:ec2::254]/', 'validation_error url'],
    ['http://[::ffff:127.0.0.1]/', 'validation_error url'],
    ['http://0x7f000001/', 'validation_error url'],
    ['http://[::169.254.169.254]/', 'validation_error url'],
    ['http://[::127.0.0.1]:9090/', 'validation_error url'],
    ['http://[::10.0.0.1]/', 'validation_error url'],
    ['http://[::ffff:169.254.169.254]/', 'validation_error url'],
    ['https://user:pass@hooks.example.com/vigil', 'validation_error url'],
    ['https://user@hooks.example.com/vigil', 'validation_error url'],
    ['https://:pass@hooks.example.com/vigil', 'validation_error url'],
    ['https://mixed.example.com/', 'validation_error url'],
    ['https://metadata.example.com/', 'validation_error url'],
    ['https://compat.example.com/', 'validation_error url'],
    ['https://nowhere.example.com/', 'validation_error url'],
    ['https://invalid.example.com/', 'validation_error url'],
    [`http://${Array<string>(5).fill('a'.repeat(63)).join('.')}/`, 'validation_error url'],
    [`http://${'a'.repeat(64)}.example.com/`, 'validation_error url'],
    [`http://${Array<string>(4).fill('a'.repeat(62)).join('.')}.b/`, 'accepted'],
    ['https://broken.example.com/', 'unavailable'],
    ['https://slow.example.com/', 'unavailable'],
  ])('%s: %s', async (url, expected) => {
    expect(await outcome(strict, url)).toBe(expected);
  });

  it('accepts loopback receivers once allow-listed, as the notifier does', async () => {
    const local = endpointUrlGuard({ allowedCidrs: ['127.0.0.0/8', '::1/128'], resolve });
    expect(await outcome(local, 'http://127.0.0.1:9999/hook')).toBe('accepted');
    expect(await outcome(local, 'http://localhost:9999/hook')).toBe('accepted');
    expect(await outcome(local, 'http://10.0.0.1/hook')).toBe('validation_error url');
  });

  it('never accepts the metadata addresses, whatever the allow-list', async () => {
    const open = endpointUrlGuard({ allowedCidrs: ['0.0.0.0/0', '::/0'], resolve });
    expect(await outcome(open, 'http://169.254.169.254/')).toBe('validation_error url');
    expect(await outcome(open, 'http://[fd00:ec2::254]/')).toBe('validation_error url');
    expect(await outcome(open, 'https://metadata.example.com/')).toBe('validation_error url');
    expect(await outcome(open, 'http://10.0.0.1/')).toBe('accepted');
  });

  describe('with https required (the Transparency Database address)', () => {
    const tdb = { field: 'baseUrl', httpsOnly: true } as const;
    const local = endpointUrlGuard({ allowedCidrs: ['127.0.0.0/8', '::1/128'], resolve });
    it.each([
      ['https://hooks.example.com/', 'accepted'],
      ['https://93.184.215.14/', 'accepted'],
      ['http://hooks.example.com/', 'validation_error baseUrl'],
      ['http://93.184.215.14/', 'validation_error baseUrl'],
      ['https://169.254.169.254/', 'validation_error baseUrl'],
      ['https://10.0.0.1/', 'validation_error baseUrl'],
      ['https://192.168.0.1/', 'validation_error baseUrl'],
      ['https://[::ffff:169.254.169.254]/', 'validation_error baseUrl'],
      ['https://metadata.example.com/', 'validation_error baseUrl'],
      ['https://user:pass@hooks.example.com/', 'validation_error baseUrl'],
      ['http://127.0.0.1:9999/', 'accepted'],
      ['http://localhost:9999/', 'accepted'],
      ['http://10.0.0.1/', 'validation_error baseUrl'],
      ['http://169.254.169.254/', 'validation_error baseUrl'],
    ])('%s: %s', async (url, expected) => {
      expect(await outcome(local, url, tdb)).toBe(expected);
    });

    it('takes plain http only to an address the allow-list names, not to any public one', async () => {
      const open = endpointUrlGuard({ allowedCidrs: ['10.0.0.0/8'], resolve });
      expect(await outcome(open, 'http://10.0.0.1/', tdb)).toBe('accepted');
      expect(await outcome(open, 'http://hooks.example.com/', tdb)).toBe('validation_error baseUrl');
      expect(await outcome(open, 'http://mixed.example.com/', tdb)).toBe('validation_error baseUrl');
      expect(await outcome(strict, 'http://hooks.example.com/')).toBe('accepted');
    });
  });
});
