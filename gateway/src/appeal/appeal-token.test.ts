import { createHmac } from 'node:crypto';
import { AppealTokens } from './appeal-token';

const SECRET = 'a-secret-of-at-least-thirty-two-characters';

describe('appeal tokens', () => {
  let now = Date.parse('2026-05-01T00:00:00Z');
  const tokens = new AppealTokens(SECRET, 3600, () => now);

  it('carries the tenant, the user and the expiry it was issued with', () => {
    const claims = tokens.verify(tokens.issue('ten_A', 'usr_1'));
    expect(claims).toEqual({ tenantId: 'ten_A', userId: 'usr_1', expiresAt: new Date(now + 3600_000) });
  });

  it('expires after its lifetime', () => {
    const token = tokens.issue('ten_A', 'usr_1');
    now += 3600_000;
    expect(tokens.verify(token)).toBe('expired');
    now -= 3600_000;
  });

  it('refuses a payload changed to name another user or tenant', () => {
    const [, signature] = tokens.issue('ten_A', 'usr_1').split('.');
    const forged = Buffer.from(JSON.stringify({ v: 1, t: 'ten_A', u: 'usr_2', e: now / 1000 + 60 })).toString(
      'base64url',
    );
    expect(tokens.verify(`${forged}.${signature}`)).toBe('bad_signature');
  });

  it('refuses a token signed with the secret itself rather than the derived key, or with another secret', () => {
    const payload = Buffer.from(JSON.stringify({ v: 1, t: 'ten_A', u: 'usr_1', e: now / 1000 + 60 })).toString(
      'base64url',
    );
    const naive = createHmac('sha256', SECRET).update(payload).digest('base64url');
    expect(tokens.verify(`${payload}.${naive}`)).toBe('bad_signature');
    const other = new AppealTokens(`${SECRET}x`, 3600, () => now);
    expect(tokens.verify(other.issue('ten_A', 'usr_1'))).toBe('bad_signature');
  });

  it('refuses every spelling of the signature but the canonical one (padding, unused low bits, base64 alphabet)', () => {
    const [payload, signature] = tokens.issue('ten_A', 'usr_1').split('.') as [string, string];
    // 32 bytes are 43 base64url characters: the last carries 4 bits and 2 unused ones.
    const last = signature.charCodeAt(signature.length - 1);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const lastValue = alphabet.indexOf(String.fromCharCode(last));
    const flipped = signature.slice(0, -1) + alphabet[lastValue ^ 1]!;
    expect(Buffer.from(flipped, 'base64url')).toEqual(Buffer.from(signature, 'base64url'));
    const variants = [
      `${signature}=`,
      flipped,
      Buffer.from(signature, 'base64url').toString('base64'),
      Buffer.from(signature, 'base64url').toString('base64').replace(/=+$/, ''),
    ].filter((variant) => variant !== signature);
    expect(variants.length).toBeGreaterThanOrEqual(2);
    for (const variant of variants) expect(tokens.verify(`${payload}.${variant}`)).toBe('bad_signature');
    expect(tokens.verify(`${payload}.${signature}`)).toMatchObject({ userId: 'usr_1' });
  });

  it.each([[''], ['abc'], ['a.b.c'], ['x'.repeat(600)], ['..']])('refuses the malformed token %p', (token) => {
    expect(tokens.verify(token)).toMatch(/malformed|bad_signature/);
  });
});
