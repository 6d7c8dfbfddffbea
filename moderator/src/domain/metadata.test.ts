import { LIMITS } from '@vigil/proto';
import { Content } from '../engine/content';
import { ValidationError } from './errors';
import { mergeMetadata, validateMetadata } from './metadata';

const keys = (count: number, prefix = 'k') =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, i]));

describe('validateMetadata', () => {
  it.each([
    ['a key containing .', { 'a.b': 1 }, ['metadata', 'a.b']],
    ['a key starting with $', { $gt: 1 }, ['metadata', '$gt']],
    ['a nested key starting with $', { a: { $set: 1 } }, ['metadata', 'a']],
    ['51 keys', keys(51), ['metadata']],
    ['a 41-character key', { ['k'.repeat(41)]: 1 }, ['metadata', 'k'.repeat(41)]],
    ['a key of 41 emoji', { ['😀'.repeat(41)]: 1 }, ['metadata', '😀'.repeat(41)]],
    ['a value of 501 characters as JSON', { v: '😀'.repeat(499) }, ['metadata', 'v']],
  ])('refuses %s with a validation error naming the field', (_name, metadata, path) => {
    let caught: unknown;
    try {
      validateMetadata(metadata, ['metadata']);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as ValidationError).details).toMatchObject({ issues: [{ path }] });
  });

  it('counts characters, not UTF-16 units, as every other bound does: an emoji is one', () => {
    // 40 emoji are 80 UTF-16 units; 498 emoji and the quotes are 500 characters as JSON (998 units).
    expect(() => validateMetadata({ ['😀'.repeat(40)]: '😀'.repeat(498) }, ['metadata'])).not.toThrow();
  });

  it('accepts 50 keys with values of every JSON type', () => {
    expect(() => validateMetadata({ ...keys(45), s: 's', n: 1, b: true, z: null, o: { a: [1] } }, ['m'])).not.toThrow();
  });
});

describe('metadata depth', () => {
  /** A string `levels` levels below the value returned (0: the string itself). */
  const nested = (levels: number, key = 'd'): unknown =>
    levels === 0 ? 'deepest' : { [key]: nested(levels - 1, key) };
  const judged = (metadata: Record<string, unknown>) =>
    new Content({ name: '', text: '', imageUrls: [], externalUrls: [], metadata }).fields;

  it('takes a value at the deepest level, which the engine judges', () => {
    const metadata = { a: nested(LIMITS.metadataDepth - 1) };
    expect(() => validateMetadata(metadata, ['metadata'])).not.toThrow();
    expect(judged(metadata)).toContain('deepest');
  });

  it.each([
    ['objects', { a: nested(LIMITS.metadataDepth) }],
    ['arrays', { a: JSON.parse(`${'['.repeat(LIMITS.metadataDepth)}"deepest"${']'.repeat(LIMITS.metadataDepth)}`) }],
    ['beside a shallow key', { ok: 1, a: [{ b: nested(LIMITS.metadataDepth - 2) }] }],
  ])('refuses a value one level deeper (%s), which the engine would not judge', (_name, metadata) => {
    expect(judged(metadata)).not.toContain('deepest');
    expect(() => validateMetadata(metadata, ['metadata'])).toThrow(
      expect.objectContaining({
        details: {
          path: 'metadata',
          issues: [{ path: ['metadata', 'a'], message: expect.stringContaining(`${LIMITS.metadataDepth} levels`) }],
        },
      }),
    );
  });
});

describe('mergeMetadata', () => {
  it.each([
    ['50 stored plus a new key', keys(50), { extra: 1 }],
    ['30 stored plus 21 new keys', keys(30), keys(21, 'n')],
  ])('refuses an update whose merged map would exceed 50 keys: %s', (_name, stored, incoming) => {
    expect(() => mergeMetadata(stored, incoming)).toThrow(ValidationError);
  });

  it.each([
    ['50 stored, one changed', keys(50), { k0: 'changed' }, 50],
    ['50 stored, one removed and one added in the same update', keys(50), { k0: '', extra: 1 }, 50],
    ['30 stored plus 20 new keys', keys(30), keys(20, 'n'), 50],
    ['cleared with {}', keys(50), {}, 0],
    ['60 stored before the limit, one changed (may keep its size)', keys(60), { k1: 'x' }, 60],
  ])('merges %s', (_name, stored, incoming, count) => {
    expect(Object.keys(mergeMetadata(stored, incoming) ?? {})).toHaveLength(count);
  });

  it('names where the metadata sits in the request', () => {
    const issuesOf = (path?: string[]): unknown => {
      try {
        mergeMetadata(keys(30), keys(30, 'c'), path);
      } catch (err) {
        return (err as ValidationError).details;
      }
      return undefined;
    };
    expect(issuesOf()).toMatchObject({ path: 'metadata', issues: [{ path: ['metadata'] }] });
    expect(issuesOf(['user', 'metadata'])).toMatchObject({
      path: 'user.metadata',
      issues: [{ path: ['user', 'metadata'] }],
    });
  });

  it('refuses growing a map stored above the limit before it was enforced', () => {
    expect(() => mergeMetadata(keys(60), { extra: 1 })).toThrow(ValidationError);
  });
});
