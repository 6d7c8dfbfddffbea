import { LIMITS } from '@vigil/proto';
import { refuseDeepNesting, refuseDuplicateKeys, refuseUnstorableValues } from './json-body';
import { InvalidJsonError, ValidationError } from '../errors';

const thrown = (fn: () => void): unknown => {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
};

describe('refuseUnstorableValues', () => {
  it.each<[string, unknown]>([
    ['a plain body', { clientId: 'a', content: { text: 'b' }, list: ['c', 1, null] }],
    ['no body', undefined],
    ['an empty query', {}],
    ['paired surrogates (an emoji) in values and keys', { clientId: 'x😀', metadata: { '😀': '\ud83d\ude00' } }],
  ])('accepts %s', (_name, value) => {
    expect(() => refuseUnstorableValues(value, [])).not.toThrow();
  });

  it.each<[string, unknown, Array<string | number>]>([
    ['a NUL in a top-level string', { clientId: 'a\0b' }, ['clientId']],
    ['a NUL deep in an array', { content: { imageUrls: ['x', 'y\0'] } }, ['content', 'imageUrls', 1]],
    ['a NUL in a key', { metadata: { 'k\0': 1 } }, ['metadata']],
    ['a lone high surrogate in an id', { clientId: 'x\ud800' }, ['clientId']],
    ['a lone low surrogate in an id', { clientId: 'x\udfff' }, ['clientId']],
    ['reversed surrogates', { name: '\ude00\ud83d' }, ['name']],
    ['a lone surrogate in user fields', { user: { clientId: 'u', email: 'a\ud800@b' } }, ['user', 'email']],
    ['a lone surrogate in a metadata key', { metadata: { 'k\udc00': 1 } }, ['metadata']],
    ['a lone surrogate in a metadata value', { metadata: { k: ['\ud800'] } }, ['metadata', 'k', 0]],
    ['an infinite number', { metadata: { a: Infinity } }, ['metadata', 'a']],
    ['a negative infinite number in an array', { list: [1, -Infinity] }, ['list', 1]],
    ['NaN', { n: NaN }, ['n']],
  ])('refuses %s with the path', (_name, value, path) => {
    const error = thrown(() => refuseUnstorableValues(value, []));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual([path]);
  });
});

describe('refuseDuplicateKeys', () => {
  it.each([['{}'], ['[]'], ['{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}'], ['{"a":"{\\"a\\":1,\\"a\\":2}"}']])(
    'accepts %s',
    (text) => {
      expect(() => refuseDuplicateKeys(text)).not.toThrow();
    },
  );

  it.each<[string, Array<Array<string | number>>]>([
    ['{"a":1,"a":2}', [['a']]],
    ['{"a":1,"\\u0061":2}', [['a']]],
    ['{"rules":[{"id":"x","name":"n","id":"y"}]}', [['rules', 0, 'id']]],
    ['{"x":{"k":1,"k":2},"y":1,"y":2}', [['x', 'k'], ['y']]],
    ['{"__proto__":{"a":1}}', [['__proto__']]],
    ['{"m":[{"\\u005f_proto__":1}]}', [['m', 0, '__proto__']]],
  ])('refuses %s naming the repeated and __proto__ keys', (text, paths) => {
    const error = thrown(() => refuseDuplicateKeys(text));
    expect(error).toBeInstanceOf(InvalidJsonError);
    expect(((error as InvalidJsonError).details as Array<{ path: unknown }>).map((issue) => issue.path)).toEqual(paths);
  });
});

describe('refuseDeepNesting', () => {
  const nested = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth);
  const objects = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);

  it.each([
    ['{}'],
    ['"a string"'],
    [nested(LIMITS.jsonDepth)],
    [objects(LIMITS.jsonDepth)],
    // Brackets inside strings, escaped quotes and backslashes do not count.
    [`{"a":"${'['.repeat(100)}"}`],
    [`{"b":"\\\\","c":"${'['.repeat(100)}"}`],
    [`{"c":"\\"${'{'.repeat(100)}"}`],
    [`[${nested(LIMITS.jsonDepth - 1)},${nested(LIMITS.jsonDepth - 1)}]`],
  ])('accepts %s', (text) => {
    expect(() => refuseDeepNesting(text, 'request body')).not.toThrow();
  });

  it.each([
    ['arrays one level too deep', nested(LIMITS.jsonDepth + 1)],
    ['objects one level too deep', objects(LIMITS.jsonDepth + 1)],
    ['ten thousand arrays', nested(10_000)],
    ['a hundred thousand unclosed objects', '{"a":'.repeat(100_000)],
    ['an escaped quote that does not end the string', `["\\"${'['.repeat(10)}",${nested(LIMITS.jsonDepth)}]`],
  ])('refuses %s with invalid_json', (_name, text) => {
    const error = thrown(() => refuseDeepNesting(text, 'request body'));
    expect(error).toBeInstanceOf(InvalidJsonError);
    expect((error as InvalidJsonError).message).toBe(
      `request body is nested too deeply: at most ${LIMITS.jsonDepth} levels of objects and arrays`,
    );
  });
});
