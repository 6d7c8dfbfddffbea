import { createCipheriv, randomBytes } from 'node:crypto';
import { EncryptionKeyList, SecretBox } from './secret-box';

const keyA = Buffer.alloc(32, 1);
const keyB = Buffer.alloc(32, 2);

describe('SecretBox', () => {
  it('opens what it sealed, for the same context only', () => {
    const box = new SecretBox([keyA]);
    const sealed = box.seal('sk_test_abc', 'payments:stripe:ten_a');
    expect(sealed).toMatch(/^v1\.[0-9a-f]{12}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('sk_test_abc');
    expect(box.open(sealed, 'payments:stripe:ten_a')).toEqual({ ok: true, plaintext: 'sk_test_abc' });
    // Copied to another tenant's document, it does not open.
    expect(box.open(sealed, 'payments:stripe:ten_b')).toEqual({ ok: false, problem: 'invalid' });
  });

  it('seals the same text differently each time (a random IV)', () => {
    const box = new SecretBox([keyA]);
    expect(box.seal('same', 'c')).not.toBe(box.seal('same', 'c'));
  });

  it('decrypts standard AES-256-GCM: a value sealed by hand with the same key, IV and context opens', () => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', keyA, iv);
    cipher.setAAD(Buffer.from('ctx'));
    const ciphertext = Buffer.concat([cipher.update('hello', 'utf8'), cipher.final()]);
    const id = new SecretBox([keyA]).seal('x', 'ctx').split('.')[1]!;
    const sealed = ['v1', id, iv, cipher.getAuthTag(), ciphertext]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
    expect(new SecretBox([keyA]).open(sealed, 'ctx')).toEqual({ ok: true, plaintext: 'hello' });
  });

  it.each([
    ['a flipped ciphertext byte', (parts: string[]) => [...parts.slice(0, 4), flip(parts[4]!)]],
    ['a flipped tag byte', (parts: string[]) => [...parts.slice(0, 3), flip(parts[3]!), parts[4]!]],
    ['a missing part', (parts: string[]) => parts.slice(0, 4)],
    ['another version', (parts: string[]) => ['v2', ...parts.slice(1)]],
  ])('refuses %s as invalid', (_name, change) => {
    const box = new SecretBox([keyA]);
    const parts = box.seal('secret text', 'c').split('.');
    expect(box.open(change(parts).join('.'), 'c')).toEqual({ ok: false, problem: 'invalid' });
  });

  it('opens with any listed key after a rotation, seals with the first, and names an unknown key', () => {
    const old = new SecretBox([keyA]).seal('before', 'c');
    const rotated = new SecretBox([keyB, keyA]);
    expect(rotated.open(old, 'c')).toEqual({ ok: true, plaintext: 'before' });
    const fresh = rotated.seal('after', 'c');
    expect(new SecretBox([keyB]).open(fresh, 'c')).toEqual({ ok: true, plaintext: 'after' });
    expect(new SecretBox([keyB]).open(old, 'c')).toEqual({ ok: false, problem: 'unknown_key' });
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(() => new SecretBox([Buffer.alloc(16)])).toThrow(/32 bytes/);
    expect(() => new SecretBox([])).toThrow(/at least one key/);
  });
});

describe('EncryptionKeyList (SECRETS_ENCRYPTION_KEY)', () => {
  it('reads comma-separated base64 keys of 32 bytes, the first first', () => {
    const parsed = EncryptionKeyList.parse(` ${keyB.toString('base64')}, ${keyA.toString('base64url')} `);
    expect(parsed).toEqual([keyB, keyA]);
  });

  it.each([
    ['a 16-byte key', Buffer.alloc(16).toString('base64')],
    ['text that is not base64', 'not base64!'],
    ['nothing', ' , '],
  ])('refuses %s', (_name, value) => {
    expect(EncryptionKeyList.safeParse(value).success).toBe(false);
  });
});

function flip(part: string): string {
  const bytes = Buffer.from(part, 'base64url');
  bytes[0] = bytes[0]! ^ 1;
  return bytes.toString('base64url');
}
