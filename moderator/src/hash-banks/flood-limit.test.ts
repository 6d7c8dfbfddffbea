import { HASH_BANK_LIMITS } from '@vigil/proto';
import { type FloodLimit } from './bank-rules';
import { ValidationError } from '../domain/errors';
import { floodOf } from './hash-bank-use-cases';

describe('a bank flood limit', () => {
  it.each<[string, number | undefined, number | undefined, FloodLimit | undefined, FloodLimit | undefined]>([
    ['off without a threshold', undefined, undefined, undefined, undefined],
    [
      'a threshold with the default window (an hour)',
      100,
      undefined,
      undefined,
      { threshold: 100, windowSeconds: 3600 },
    ],
    ['a threshold and a window', 3, 60, undefined, { threshold: 3, windowSeconds: 60 }],
    [
      "a new threshold keeping the bank's window",
      5,
      undefined,
      { threshold: 3, windowSeconds: 600 },
      { threshold: 5, windowSeconds: 600 },
    ],
    [
      'the largest threshold and window',
      HASH_BANK_LIMITS.floodThreshold,
      HASH_BANK_LIMITS.floodWindowMax,
      undefined,
      { threshold: HASH_BANK_LIMITS.floodThreshold, windowSeconds: HASH_BANK_LIMITS.floodWindowMax },
    ],
  ])('%s', (_name, threshold, window, current, expected) => {
    expect(floodOf(threshold, window, current)).toEqual(expected);
  });

  it.each<[string, number | undefined, number | undefined, string]>([
    ['a threshold of 0', 0, undefined, 'floodThreshold'],
    ['a threshold past the bound', HASH_BANK_LIMITS.floodThreshold + 1, undefined, 'floodThreshold'],
    ['a fractional threshold', 2.5, undefined, 'floodThreshold'],
    ['a window under a minute', 3, HASH_BANK_LIMITS.floodWindowMin - 1, 'floodWindowSeconds'],
    ['a window over a week', 3, HASH_BANK_LIMITS.floodWindowMax + 1, 'floodWindowSeconds'],
    ['a window without a threshold', undefined, 600, 'floodWindowSeconds'],
  ])('refuses %s, naming %s', (_name, threshold, window, path) => {
    let error: unknown;
    try {
      floodOf(threshold, window, undefined);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details).toEqual({ issues: [expect.objectContaining({ path: [path] })] });
  });
});
