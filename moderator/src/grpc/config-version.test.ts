import { parseConfigVersion } from './config-version';

describe('parseConfigVersion', () => {
  it.each([
    ['12', 12],
    ['0', 0],
    ['', undefined],
    ['-1', undefined],
    ['1e3', undefined],
    ['1234567890123456', undefined],
    [undefined, undefined],
    [Buffer.from('7'), undefined],
  ])('reads %p as %p', (value, expected) => {
    expect(parseConfigVersion(value)).toBe(expected);
  });
});
