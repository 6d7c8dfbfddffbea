import { issuesOf } from '../../http/validate';
import { LIMITS } from '@vigil/proto';
import { DeleteIngestBody, IngestBody, Metadata, ModerateBody, UserBody } from './record.schema';

const valid = { clientId: 'c1', name: 'Post', entity: 'post', content: { text: 'hello' } };

const pathsOf = (schema: { safeParse(input: unknown): { success: boolean; error?: unknown } }, input: unknown) => {
  const result = schema.safeParse(input) as { success: boolean; error?: Parameters<typeof issuesOf>[0] };
  return result.success || !result.error ? [] : issuesOf(result.error).map((issue) => issue.path.join('.'));
};

const deep = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i += 1) value = [value];
  return value;
};

const keys = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));

describe('metadata limits', () => {
  const table: Array<[string, unknown, string[]]> = [
    ['50 keys', keys(50), []],
    ['51 keys', keys(51), ['']],
    ['a 40-character key', { ['a'.repeat(40)]: 1 }, []],
    ['a 41-character key', { ['a'.repeat(41)]: 1 }, ['a'.repeat(41)]],
    ['an empty key', { '': 1 }, ['']],
    ['a key with [', { 'a[0': 1 }, ['a[0']],
    ['a key with ]', { 'a]': 1 }, ['a]']],
    ['a string of 500 characters as JSON (498 plus quotes)', { a: 'x'.repeat(498) }, []],
    ['a string of 501 characters as JSON (499 plus quotes)', { a: 'x'.repeat(499) }, ['a']],
    ['a string whose JSON escapes push it past 500', { a: '"'.repeat(300) }, ['a']],
    ['a value nested 10,000 levels deep', { a: deep(10000) }, ['a']],
    ['an object value of 500 characters as JSON', { a: { b: 'x'.repeat(492) } }, []],
    ['an object value of 501 characters as JSON', { a: { b: 'x'.repeat(493) } }, ['a']],
    ['values of every JSON type', { s: 's', n: 1, b: true, z: null, a: [1], o: { x: 1 } }, []],
    ['an undefined value (not serialisable)', { a: undefined }, ['a']],
    ['a key containing .', { 'a.b': 1 }, ['a.b']],
    ['a key starting with $', { $where: 1 }, ['$where']],
    ['a key with $ later on', { a$: 1 }, []],
    ['a nested key starting with $', { a: { $set: 1 } }, ['a']],
    ['a nested key containing . inside an array', { a: [{ 'x.y': 1 }] }, ['a']],
    ['an array directly inside an array', { a: [1, [2]] }, ['a']],
    ['an array inside an object inside an array', { a: [{ b: [1] }] }, []],
  ];
  it.each(table)('%s', (_name, metadata, expectedPaths) => {
    expect(pathsOf(Metadata, metadata)).toEqual(expectedPaths);
  });

  it('reports every failing key of one request, each with its full path', () => {
    const paths = pathsOf(ModerateBody, {
      ...valid,
      metadata: { ['a'.repeat(41)]: 1, 'b[': 2, c: 'x'.repeat(501) },
      user: { clientId: 'u1', metadata: { 'd]': 1 } },
    });
    expect(paths).toEqual(
      expect.arrayContaining([`metadata.${'a'.repeat(41)}`, 'metadata.b[', 'metadata.c', 'user.metadata.d]']),
    );
    expect(paths).toHaveLength(4);
  });

  it('applies to user metadata of /ingest/user too (51 keys refused)', () => {
    expect(pathsOf(UserBody, { clientId: 'u', metadata: keys(51) })).toEqual(['metadata']);
  });
});

describe('record body', () => {
  const table: Array<[string, unknown, string[]]> = [
    ['a valid record', valid, []],
    ['an empty body lists every required field', {}, ['clientId', 'name', 'entity', 'content']],
    ['an empty clientId', { ...valid, clientId: '' }, ['clientId']],
    ['an empty name', { ...valid, name: '' }, ['name']],
    ['an empty entity', { ...valid, entity: '' }, ['entity']],
    ['a non-string clientId', { ...valid, clientId: 5 }, ['clientId']],
    ['a clientUrl that is not a URI', { ...valid, clientUrl: 'not a url' }, ['clientUrl']],
    ['a clientUrl that is a URI', { ...valid, clientUrl: 'https://example.com/p/1' }, []],
    ['an unknown top-level key', { ...valid, colour: 'red' }, ['colour']],
    ['two unknown top-level keys', { ...valid, colour: 'red', size: 1 }, ['colour', 'size']],
    ['unknown keys inside content are dropped', { ...valid, content: { text: 'x', extra: 1 } }, []],
    ['content without text', { ...valid, content: { imageUrls: [] } }, ['content.text']],
    [
      'an image URL that is not a URL',
      { ...valid, content: { text: 'x', imageUrls: ['nope'] } },
      ['content.imageUrls.0'],
    ],
    [
      'an external URL that is not a URL',
      { ...valid, content: { text: 'x', externalUrls: ['x', 'https://a.b'] } },
      ['content.externalUrls.0'],
    ],
    ['a user without clientId', { ...valid, user: { name: 'n' } }, ['user.clientId']],
    ['a user with a bad clientUrl', { ...valid, user: { clientId: 'u', clientUrl: 'x' } }, ['user.clientUrl']],
    [
      'a user with a non-boolean protected',
      { ...valid, user: { clientId: 'u', protected: 'yes' } },
      ['user.protected'],
    ],
    ['legacy top-level text instead of content', { clientId: 'c', name: 'n', entity: 'e', text: 'hi' }, []],
  ];
  it.each(table)('moderate: %s', (_name, input, expectedPaths) => {
    expect(pathsOf(ModerateBody, input)).toEqual(expectedPaths);
  });

  it('moderate accepts string content and normalises it to an object', () => {
    expect(ModerateBody.parse({ ...valid, content: 'hello' }).content).toEqual({
      text: 'hello',
      imageUrls: [],
      externalUrls: [],
    });
  });

  it('ingest refuses string content', () => {
    expect(pathsOf(IngestBody, { ...valid, content: 'hello' })).toEqual(['content']);
  });

  it('ingest refuses passthrough, which only moderate accepts', () => {
    expect(pathsOf(IngestBody, { ...valid, passthrough: true })).toEqual(['passthrough']);
    expect(pathsOf(ModerateBody, { ...valid, passthrough: true })).toEqual([]);
    expect(pathsOf(ModerateBody, { ...valid, passthrough: 'yes' })).toEqual(['passthrough']);
  });

  it('folds legacy text and fileUrls into content', () => {
    const parsed = IngestBody.parse({
      clientId: 'c',
      name: 'n',
      entity: 'e',
      text: 'hi',
      fileUrls: ['https://x.y/a.png'],
    });
    expect(parsed.content).toEqual({ text: 'hi', imageUrls: ['https://x.y/a.png'], externalUrls: [] });
    expect(parsed).not.toHaveProperty('text');
    expect(parsed).not.toHaveProperty('fileUrls');
  });

  it('lets an explicit content win over legacy text', () => {
    expect(ModerateBody.parse({ ...valid, text: 'old' }).content.text).toBe('hello');
  });

  it('accepts stripeAccountId as an alias of paymentsAccountId', () => {
    const parsed = IngestBody.parse({ ...valid, user: { clientId: 'u', stripeAccountId: 'acct_1' } });
    expect(parsed.user).toEqual({ clientId: 'u', paymentsAccountId: 'acct_1' });
  });

  it('drops unknown keys inside a nested user but refuses them in /ingest/user', () => {
    expect(IngestBody.parse({ ...valid, user: { clientId: 'u', extra: 1 } }).user).toEqual({ clientId: 'u' });
    expect(pathsOf(UserBody, { clientId: 'u', extra: 1 })).toEqual(['extra']);
  });
});

describe('input bounds', () => {
  const urls = (count: number, length = 30) =>
    Array.from({ length: count }, (_, i) => `https://example.com/${String(i).padEnd(length - 20, 'x')}`);
  const longUrl = `https://example.com/${'p'.repeat(LIMITS.url - 20)}`;
  const table: Array<[string, unknown, string[]]> = [
    ['a clientId of 256 characters', { ...valid, clientId: 'c'.repeat(256) }, []],
    ['a clientId of 257 characters', { ...valid, clientId: 'c'.repeat(257) }, ['clientId']],
    ['a name of 1000 characters', { ...valid, name: 'n'.repeat(1000) }, []],
    ['a name of 1001 characters', { ...valid, name: 'n'.repeat(1001) }, ['name']],
    ['an entity of 101 characters', { ...valid, entity: 'e'.repeat(101) }, ['entity']],
    ['a clientUrl over 2048 characters', { ...valid, clientUrl: `${longUrl}x` }, ['clientUrl']],
    ['text of 100,000 characters', { ...valid, content: { text: 't'.repeat(100_000) } }, []],
    ['text of 100,001 characters', { ...valid, content: { text: 't'.repeat(100_001) } }, ['content.text']],
    ['legacy text of 100,001 characters', { ...valid, content: undefined, text: 't'.repeat(100_001) }, ['text']],
    ['50 image URLs', { ...valid, content: { text: 'x', imageUrls: urls(50) } }, []],
    ['51 image URLs', { ...valid, content: { text: 'x', imageUrls: urls(51) } }, ['content.imageUrls']],
    ['51 external URLs', { ...valid, content: { text: 'x', externalUrls: urls(51) } }, ['content.externalUrls']],
    [
      'an image URL over 2048 characters',
      { ...valid, content: { text: 'x', imageUrls: [`${longUrl}x`] } },
      ['content.imageUrls.0'],
    ],
    ['a user clientId of 257 characters', { ...valid, user: { clientId: 'u'.repeat(257) } }, ['user.clientId']],
    [
      'a user email of 321 characters',
      { ...valid, user: { clientId: 'u', email: `${'e'.repeat(309)}@example.com` } },
      ['user.email'],
    ],
    ['a user name of 257 characters', { ...valid, user: { clientId: 'u', name: 'n'.repeat(257) } }, ['user.name']],
    [
      'a user username of 257 characters',
      { ...valid, user: { clientId: 'u', username: 'n'.repeat(257) } },
      ['user.username'],
    ],
    [
      'every field within its bound but the whole record over 256 KiB',
      // 100,000 three-byte characters are 300,000 bytes of JSON.
      { ...valid, content: { text: '€'.repeat(100_000) } },
      [''],
    ],
  ];
  it.each(table)('ingest: %s', (_name, input, expectedPaths) => {
    expect(pathsOf(IngestBody, input)).toEqual(expectedPaths);
  });

  it('moderate: bounds a string content like content.text', () => {
    expect(pathsOf(ModerateBody, { ...valid, content: 't'.repeat(100_001) })).toEqual(['content']);
    expect(pathsOf(ModerateBody, { ...valid, content: 't'.repeat(100_000) })).toEqual([]);
  });

  it('bounds the clientId of DELETE /ingest and every field of /ingest/user', () => {
    expect(pathsOf(DeleteIngestBody, { clientId: 'c'.repeat(257) })).toEqual(['clientId']);
    expect(
      pathsOf(UserBody, {
        clientId: 'u'.repeat(257),
        email: 'e'.repeat(321),
        name: 'n'.repeat(257),
        username: 'n'.repeat(257),
        paymentsAccountId: 'p'.repeat(257),
      }),
    ).toEqual(['clientId', 'paymentsAccountId', 'email', 'name', 'username']);
  });
});
