import { recordIdFor, userIdFor } from './ids';

describe('derived ids', () => {
  it('are the same for the same tenant and clientId, and differ otherwise', () => {
    expect(recordIdFor('ten_A', 'c-1')).toBe(recordIdFor('ten_A', 'c-1'));
    expect(recordIdFor('ten_A', 'c-1')).not.toBe(recordIdFor('ten_B', 'c-1'));
    expect(recordIdFor('ten_A', 'x\u{1F600}')).toMatch(/^rec_[0-9a-f]{32}$/);
  });

  it('are never derived from a lone surrogate, which UTF-8 would fold into U+FFFD', () => {
    expect(() => recordIdFor('ten_A', 'x\ud800')).toThrow(TypeError);
    expect(() => userIdFor('ten_A', 'x\udfff')).toThrow(TypeError);
    expect(() => recordIdFor('ten_A', '\ude00\ud83d')).toThrow(TypeError);
  });
});
