import { DUMMY_HASH, generatePassword, hashPassword, verifyPassword } from './password';

describe('console passwords', () => {
  it('verifies the password a hash was made from, and no other', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(stored).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(stored).not.toContain('correct');
    await expect(verifyPassword('correct horse battery', stored)).resolves.toBe(true);
    await expect(verifyPassword('correct horse batterY', stored)).resolves.toBe(false);
  });

  it('salts every hash', async () => {
    expect(await hashPassword('same password')).not.toBe(await hashPassword('same password'));
  });

  it.each([['plain'], ['scrypt$x$8$1$a$b'], ['md5$1$1$1$a$b'], ['scrypt$4294967296$8$1$AAAA$AAAA']])(
    'never matches the malformed stored hash %p',
    async (stored) => {
      await expect(verifyPassword('plain', stored)).resolves.toBe(false);
    },
  );

  it('matches nothing against the dummy hash', async () => {
    await expect(verifyPassword('', DUMMY_HASH)).resolves.toBe(false);
  });

  it('generates 32-character random passwords', () => {
    const a = generatePassword();
    expect(a).toMatch(/^[\w-]{32}$/);
    expect(generatePassword()).not.toBe(a);
  });
});
