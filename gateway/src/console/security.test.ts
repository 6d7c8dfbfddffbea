import { CSP, safeNext, sameToken } from './security';

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

  it('allows neither inline script nor inline style', () => {
    expect(CSP).not.toContain('unsafe-inline');
    expect(CSP).toContain("script-src 'self'");
    expect(CSP).toContain("frame-ancestors 'none'");
  });
});
