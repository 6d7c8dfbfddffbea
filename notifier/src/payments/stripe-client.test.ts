import { errorOf, shouldRetry } from './stripe-client';

describe('shouldRetry', () => {
  it.each([
    [429, undefined, true],
    [409, undefined, true],
    [500, undefined, true],
    [503, undefined, true],
    [400, undefined, false],
    [401, undefined, false],
    [403, undefined, false],
    [404, undefined, false],
    // Stripe's Stripe-Should-Retry header decides when present.
    [500, 'false', false],
    [400, 'true', true],
  ] as const)('%i with Stripe-Should-Retry %s → %s', (status, header, expected) => {
    expect(shouldRetry(status, header)).toBe(expected);
  });
});

describe('errorOf', () => {
  it("keeps the type and code of Stripe's error body, not its message", () => {
    const body = JSON.stringify({
      error: { type: 'invalid_request_error', code: 'account_invalid', message: 'No such account: acct_1' },
    });
    expect(errorOf(body)).toEqual({ type: 'invalid_request_error', code: 'account_invalid' });
  });

  it.each([
    ['not JSON', '<html>bad gateway</html>'],
    ['JSON null', 'null'],
    ['no error object', '{"ok":true}'],
    ['free text where an identifier belongs', '{"error":{"type":"Something went wrong: acct_1","code":7}}'],
  ])('gives nothing for %s', (_name, body) => {
    expect(errorOf(body)).toEqual({ type: undefined, code: undefined });
  });
});
