import { ValidationError } from './errors';
import { checkLength, checkRecordBounds, checkUserBounds } from './bounds';

const record = {
  clientId: 'c1',
  name: 'Post',
  entity: 'post',
  content: { text: 'hello', imageUrls: [], externalUrls: [] },
};

const pathsOf = (run: () => void): string[] => {
  try {
    run();
    return [];
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return (err.details as { issues: Array<{ path: unknown[] }> }).issues.map((issue) => issue.path.join('.'));
  }
};

describe('record bounds (gRPC Moderate and ingest commands)', () => {
  it.each([
    ['a record within every bound', record, []],
    ['a clientId of 257 characters', { ...record, clientId: 'c'.repeat(257) }, ['clientId']],
    ['a name of 1001 characters', { ...record, name: 'n'.repeat(1001) }, ['name']],
    ['an entity of 101 characters', { ...record, entity: 'e'.repeat(101) }, ['entity']],
    [
      'text of 100,001 characters',
      { ...record, content: { ...record.content, text: 't'.repeat(100_001) } },
      ['content.text'],
    ],
    [
      '51 image URLs',
      { ...record, content: { ...record.content, imageUrls: Array.from({ length: 51 }, () => 'https://a.b/') } },
      ['content.imageUrls'],
    ],
    ['a user email of 321 characters', { ...record, user: { clientId: 'u', email: 'e'.repeat(321) } }, ['user.email']],
    ['a whole record over 256 KiB', { ...record, content: { ...record.content, text: '€'.repeat(100_000) } }, ['']],
  ])('%s', (_name, input, paths) => {
    expect(pathsOf(() => checkRecordBounds(input))).toEqual(paths);
  });

  it('bounds a user of /ingest/user', () => {
    expect(pathsOf(() => checkUserBounds({ clientId: 'u'.repeat(257), username: 'n'.repeat(257) }))).toEqual([
      'clientId',
      'username',
    ]);
  });

  it('bounds free text by its limit', () => {
    expect(pathsOf(() => checkLength('r'.repeat(2001), 2000, 'reason'))).toEqual(['reason']);
    expect(pathsOf(() => checkLength('r'.repeat(2000), 2000, 'reason'))).toEqual([]);
    // In characters, as the gateway's schemas count them: 2,000 emoji are 4,000 UTF-16 units.
    expect(pathsOf(() => checkLength('😀'.repeat(2000), 2000, 'reason'))).toEqual([]);
    expect(pathsOf(() => checkLength('😀'.repeat(2001), 2000, 'reason'))).toEqual(['reason']);
  });
});
