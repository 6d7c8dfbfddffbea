import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * Appeal links, a contract between the gateway (which verifies them and hands them out as `appealUrl`) and the
 * notifier (which puts them in Suspended emails); both hold `APPEAL_TOKEN_SECRET`. Format: `<payload>.<signature>`,
 * both base64url without padding (the signature in that one spelling only). The payload names the tenant, the user and an expiry (seconds since the epoch); the signature is
 * HMAC-SHA256 over the payload with a key derived from `APPEAL_TOKEN_SECRET` (HKDF-SHA256, so the secret serves
 * nothing else). Unlike Iffy's links, they expire and are compared in constant time.
 */
const Payload = z.strictObject({
  v: z.literal(1),
  t: z.string().min(1).max(64),
  u: z.string().min(1).max(64),
  e: z.number().int().positive(),
});
export type AppealClaims = { tenantId: string; userId: string; expiresAt: Date };

/** Why a token was refused (not shown to the visitor beyond "invalid or expired"). */
export type TokenProblem = 'malformed' | 'bad_signature' | 'expired';

export class AppealTokens {
  private readonly key: Buffer;

  constructor(
    secret: string,
    private readonly ttlSeconds: number,
    private readonly now: () => number = Date.now,
    /**
     * `complaint`: links of a reporter's complaint about a decision not to act, whose subject (`u`) is the report id.
     * Their key is derived apart, so neither kind of link passes for the other.
     */
    purpose: 'appeal' | 'complaint' = 'appeal',
  ) {
    this.key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), `vigil ${purpose} token v1`, 32));
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }

  /**
   * A link valid for the configured lifetime, or `atLeastSeconds` when longer: a link in a statement of reasons lives as
   * long as the appeal it offers stays open.
   */
  issue(tenantId: string, userId: string, atLeastSeconds = 0): string {
    const e = Math.floor(this.now() / 1000) + Math.max(this.ttlSeconds, atLeastSeconds);
    const payload = Buffer.from(JSON.stringify({ v: 1, t: tenantId, u: userId, e })).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  verify(token: string): AppealClaims | TokenProblem {
    if (token.length > 512) return 'malformed';
    const [payload, signature, extra] = token.split('.');
    if (!payload || !signature || extra !== undefined) return 'malformed';
    // The signature is compared as text, in its one canonical encoding: decoding it first would accept other spellings
    // of the same bytes (a trailing '=', a flipped unused low bit in the last character, '+' for '-').
    const expected = Buffer.from(this.sign(payload), 'utf8');
    const actual = Buffer.from(signature, 'utf8');
    if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return 'bad_signature';
    let claims: z.infer<typeof Payload>;
    try {
      const parsed = Payload.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
      if (!parsed.success) return 'malformed';
      claims = parsed.data;
    } catch {
      return 'malformed';
    }
    if (claims.e * 1000 <= this.now()) return 'expired';
    return { tenantId: claims.t, userId: claims.u, expiresAt: new Date(claims.e * 1000) };
  }
}
