import { decodeTime } from 'ulid';
import { monotonicUlid, randomFraction, recordIdFor, ulid, userIdFor } from './ids';

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

describe('ulid with the pooled random source', () => {
  const CROCKFORD = /^[0-9A-HJKMNP-TV-Z]{26}$/;

  it('makes valid, distinct ids carrying their time, whose random part uses the whole alphabet', () => {
    const at = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
    const ids = Array.from({ length: 5000 }, () => ulid(at));
    for (const id of ids) expect(id).toMatch(CROCKFORD);
    expect(new Set(ids).size).toBe(ids.length);
    expect(decodeTime(ids[0] ?? '')).toBe(at);
    // 5,000 ids draw 80,000 characters (more than the 4,096-byte pool holds, so it is refilled on the way).
    const letters = new Set(ids.flatMap((id) => [...id.slice(10)]));
    expect(letters.size).toBe(32);
  });

  it('draws fractions in [0, 1) spread evenly over the 32 letters', () => {
    const counts = new Array<number>(32).fill(0);
    const draws = 64000;
    let [lowest, highest] = [1, 0];
    for (let i = 0; i < draws; i += 1) {
      const fraction = randomFraction();
      [lowest, highest] = [Math.min(lowest, fraction), Math.max(highest, fraction)];
      const letter = Math.floor(fraction * 32);
      counts[letter] = (counts[letter] ?? 0) + 1;
    }
    expect(lowest).toBeGreaterThanOrEqual(0);
    expect(highest).toBeLessThan(1);
    // Each letter expects 2,000 draws; a bias of a tenth would be far outside chance (σ ≈ 44).
    for (const count of counts) expect(Math.abs(count - draws / 32)).toBeLessThan(250);
  });

  it('keeps ids of one generator in order within a millisecond', () => {
    const next = monotonicUlid();
    const at = Date.now();
    const ids = Array.from({ length: 100 }, () => next(at));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(100);
  });
});
