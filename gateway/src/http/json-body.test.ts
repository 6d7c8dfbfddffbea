import { refuseNul } from './json-body';
import { ValidationError } from './errors';

describe('refuseNul', () => {
  it.each<[string, unknown]>([
    ['a plain body', { clientId: 'a', content: { text: 'b' }, list: ['c', 1, null] }],
    ['no body', undefined],
    ['an empty query', {}],
  ])('accepts %s', (_name, value) => {
    expect(() => refuseNul(value, [])).not.toThrow();
  });

  it.each<[string, unknown, Array<string | number>]>([
    ['a NUL in a top-level string', { clientId: 'a\0b' }, ['clientId']],
    ['a NUL deep in an array', { content: { imageUrls: ['x', 'y\0'] } }, ['content', 'imageUrls', 1]],
    ['a NUL in a key', { metadata: { 'k\0': 1 } }, ['metadata']],
  ])('refuses %s with the path', (_name, value, path) => {
    let error: unknown;
    try {
      refuseNul(value, []);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual([path]);
  });
});
