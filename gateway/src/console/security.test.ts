import type { Context } from 'koa';
import { CSP, checkSameOrigin, safeNext, sameToken } from './security';

/** The parts of a request the origin check reads. */
const request = (headers: Record<string, string>, host = 'vigil.example:8080', protocol = 'http') =>
  ({ get: (name: string) => headers[name] ?? '', host, protocol }) as unknown as Context;

describe('console security helpers', () => {
  it.each([
    ['/console/records?status=Flagged', '/console/records?status=Flagged'],
    ['/console', '/console'],
    ['//evil.example/console', '/console/records'],
    ['https://evil.example/console/x', '/console/records'],
    ['/console/\\evil', '/console/records'],
    ['/consoleevil', '/console/records'],
    ['/api/v1/records', '/console/records'],
    [undefined, '/console/records'],
  ])('safeNext(%p) is %p', (input, expected) => {
    expect(safeNext(input, '/console', '/console/records')).toBe(expected);
  });

  it('compares tokens exactly', () => {
    expect(sameToken('abc', 'abc')).toBe(true);
    expect(sameToken('abc', 'abd')).toBe(false);
    expect(sameToken('abc', 'abcd')).toBe(false);
    expect(sameToken('', 'a')).toBe(false);
  });

  it.each<[string, Record<string, string>, boolean]>([
    ['no Origin (a client that is not a browser)', {}, true],
    ['our own origin', { origin: 'http://vigil.example:8080', 'sec-fetch-site': 'same-origin' }, true],
    ['the origin of PUBLIC_URL', { origin: 'https://moderation.example' }, true],
    [
      'Origin null from our own page (Referrer-Policy: no-referrer)',
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
      true,
    ],
    ['the user typing the URL', { 'sec-fetch-site': 'none' }, true],
    ['another site', { origin: 'https://evil.example' }, false],
    ['another port of our host', { origin: 'http://vigil.example:9999', 'sec-fetch-site': 'same-site' }, false],
    ['another scheme', { origin: 'https://vigil.example:8080' }, false],
    ['a sibling subdomain', { origin: 'http://a.vigil.example:8080', 'sec-fetch-site': 'same-site' }, false],
    ['our origin marked cross-site', { origin: 'http://vigil.example:8080', 'sec-fetch-site': 'cross-site' }, false],
    ['Origin null without Sec-Fetch-Site', { origin: 'null' }, false],
    ['Origin null from another site', { origin: 'null', 'sec-fetch-site': 'cross-site' }, false],
    ['a look-alike of our origin', { origin: 'http://vigil.example:8080.evil.example' }, false],
  ])('the origin check with %s (%j): allowed %s', (_name, headers, allowed) => {
    let code: string | undefined;
    try {
      checkSameOrigin(request(headers), 'https://moderation.example');
    } catch (err) {
      code = (err as { code?: string }).code;
    }
    expect(code).toBe(allowed ? undefined : 'forbidden');
  });

  it('allows neither inline script nor inline style', () => {
    expect(CSP).not.toContain('unsafe-inline');
    expect(CSP).toContain("script-src 'self'");
    expect(CSP).toContain("frame-ancestors 'none'");
  });
});
