import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { CommaList } from './comma-list';

/**
 * Tenant secrets at rest (a tenant's payments key), a contract between the gateway (which seals them) and the
 * notifier (which opens them); both hold `SECRETS_ENCRYPTION_KEY`. AES-256-GCM with a random 96-bit IV per seal and
 * the caller's context (e.g. `payments:<tenantId>`) as additional data, so a sealed value copied to another tenant's
 * document does not open. Format: `v1.<keyId>.<iv>.<tag>.<ciphertext>`, base64url; `keyId` names the key that sealed
 * it (a hash prefix, not the key), so after a rotation the right one of several keys is used.
 */
export class SecretBox {
  private readonly keys: Array<{ id: string; key: Buffer }>;

  /** `keys`: 32 bytes each; the first seals, every one opens (a rotation lists the new key first). */
  constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error('SecretBox needs at least one key');
    this.keys = keys.map((key) => {
      if (key.length !== 32) throw new Error('SecretBox keys are 32 bytes');
      return { id: keyIdOf(key), key };
    });
  }

  seal(plaintext: string, context: string): string {
    const { id, key } = this.keys[0]!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url'));
    return ['v1', id, ...parts].join('.');
  }

  /** The plaintext, or why it cannot be had: `unknown_key` (sealed with a key not configured) or `invalid`. */
  open(sealed: string, context: string): { ok: true; plaintext: string } | { ok: false; problem: SealProblem } {
    const [version, id, iv, tag, ciphertext, extra] = sealed.split('.');
    if (version !== 'v1' || !id || !iv || !tag || ciphertext === undefined || extra !== undefined) {
      return { ok: false, problem: 'invalid' };
    }
    const entry = this.keys.find((candidate) => candidate.id === id);
    if (!entry) return { ok: false, problem: 'unknown_key' };
    try {
      const decipher = createDecipheriv('aes-256-gcm', entry.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      const plaintext = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
      return { ok: true, plaintext: plaintext.toString('utf8') };
    } catch {
      // A wrong tag, IV length or context: tampered with, or sealed for another tenant.
      return { ok: false, problem: 'invalid' };
    }
  }
}

export type SealProblem = 'unknown_key' | 'invalid';

function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('vigil secret box key id\0').update(key).digest('hex').slice(0, 12);
}

/**
 * `SECRETS_ENCRYPTION_KEY`: comma-separated base64 of 32 random bytes each (`openssl rand -base64 32`), the sealing
 * key first. Shared by the gateway's and the notifier's configuration so both read it alike.
 */
export const EncryptionKeyList = CommaList.pipe(
  z
    .array(
      z
        .string()
        .max(64)
        .regex(/^[A-Za-z0-9+/_-]+={0,2}$/, 'must be base64')
        .transform((text) => Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64'))
        .refine((key) => key.length === 32, 'each key must be 32 bytes (openssl rand -base64 32)'),
    )
    .min(1)
    .max(8),
);
