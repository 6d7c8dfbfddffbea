import { ulid } from '@vigil/proto';
import { decodeTime } from 'ulid';
import { ValidationError } from '../domain/errors';
import { sortBounds } from './queries';

describe('sortBounds', () => {
  it('maps a time range to ULID bounds that include ids from its start and exclude ids from its end', () => {
    const from = Date.parse('2026-03-01T00:00:00.000Z');
    const to = Date.parse('2026-03-02T00:00:00.000Z');
    const bounds = sortBounds(new Date(from).toISOString(), new Date(to).toISOString());
    expect(decodeTime(bounds.$gte!)).toBe(from);
    expect(decodeTime(bounds.$lt!)).toBe(to);
    expect(ulid(from) >= bounds.$gte!).toBe(true);
    expect(ulid(to - 1) < bounds.$lt!).toBe(true);
    expect(ulid(to) < bounds.$lt!).toBe(false);
  });

  it('leaves an open side unbounded', () => {
    expect(sortBounds()).toEqual({});
    expect(Object.keys(sortBounds('2026-03-01'))).toEqual(['$gte']);
  });

  it.each([['yesterday'], ['']])('refuses %p with a validation error naming the field', (value) => {
    expect(() => sortBounds(value)).toThrow(ValidationError);
  });
});
