import { storableText } from './storable-text';

describe('storableText', () => {
  it.each([
    ['keeps text without a NUL as it is', 'plain answer ü', 'plain answer ü'],
    ['drops a NUL in the middle', 'ok\u0000done', 'okdone'],
    ['drops NULs at both ends', '\u0000a\u0000', 'a'],
    ['leaves nothing of NULs alone', '\u0000\u0000', ''],
  ])('%s', (_name, text, expected) => {
    expect(storableText(text)).toBe(expected);
  });
});
