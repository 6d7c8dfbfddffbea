import { ValidationError } from '../domain/errors';
import { parseHashCsv } from './csv-import';

const pdq = (digit: string) => digit.repeat(64);

function issuesOf(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return (err as ValidationError).details?.issues;
  }
  throw new Error('expected a ValidationError');
}

describe('parseHashCsv', () => {
  it('reads hashes alone, one a row, lowercased, skipping blank and comment lines', () => {
    const text = `# exported 2026-01-01\n${pdq('A')}\n\n${pdq('b')}\n`;
    expect(parseHashCsv(text, 'pdq')).toEqual([
      { value: pdq('a'), metadata: {} },
      { value: pdq('b'), metadata: {} },
    ]);
  });

  it('names metadata by the header row, and quoted cells keep their commas', () => {
    const text = `hash,source,case\n${pdq('a')},ncmec,"12,34"\n${pdq('b')},,7\n`;
    expect(parseHashCsv(text, 'pdq')).toEqual([
      { value: pdq('a'), metadata: { source: 'ncmec', case: '12,34' } },
      { value: pdq('b'), metadata: { case: '7' } },
    ]);
  });

  it('names metadata columns by position without a header', () => {
    expect(parseHashCsv(`${'a'.repeat(32)},tag`, 'md5')).toEqual([
      { value: 'a'.repeat(32), metadata: { col2: 'tag' } },
    ]);
  });

  it('fails with every bad row named by its line number', () => {
    const text = `hash,source\n${pdq('a')},ok\nnot-a-hash,x\n${'a'.repeat(32)},md5 in a pdq bank\n${pdq('c')},${'x'.repeat(501)}\n`;
    expect(issuesOf(() => parseHashCsv(text, 'pdq'))).toEqual([
      { path: ['csv', 3], message: 'line 3: not a pdq hash (64 hex digits)' },
      { path: ['csv', 4], message: 'line 4: not a pdq hash (64 hex digits)' },
      { path: ['csv', 5], message: 'line 5: source over 500 characters' },
    ]);
  });

  it('fails on a file with no hashes, and on unbalanced quotes', () => {
    expect(issuesOf(() => parseHashCsv('hash,source\n', 'pdq'))).toEqual([{ path: ['csv'], message: 'no hashes' }]);
    expect(issuesOf(() => parseHashCsv(`${pdq('a')},"open\n`, 'pdq'))).toEqual([
      { path: ['csv', expect.any(Number)], message: expect.stringContaining('not valid CSV') },
    ]);
  });

  it('fails on more rows than an import takes', () => {
    const text = Array.from({ length: 10_001 }, () => pdq('a')).join('\n');
    expect(issuesOf(() => parseHashCsv(text, 'pdq'))).toEqual([
      { path: ['csv'], message: 'at most 10000 rows (got 10001)' },
    ]);
  });
});
