import type { Context, Next } from 'koa';
import inflate from 'inflation';
import { visit, type JSONPath } from 'jsonc-parser';
import getRawBody from 'raw-body';
import { LIMITS } from '@vigil/proto';
import { InvalidJsonError, UnsupportedMediaTypeError, ValidationError, type Issue } from '../errors';

const JSON_TYPES = ['application/json'];
/** Refuses bytes that are not UTF-8 (a lone surrogate's encoding `ED A0 80` among them) instead of replacing them. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });
/** What a strict JSON body starts with (after whitespace): an object or an array. */
const STRICT_START = /^[ \t\n\r]*[[{]/;

/**
 * Parses a JSON request body (and nothing else) up to `limitBytes`, after Content-Encoding (gzip, deflate, br). A
 * body of another type, or announced in another charset than UTF-8, is refused with 415 before it is read; a body
 * without any content type or length, or announced as JSON but without any (see `bodiless`), is taken as absent and
 * left to the schema. Bytes that are not UTF-8 are refused (400 `invalid_json`) rather than read as U+FFFD, and the
 * text is then read as `parseJson` does; an empty body is `{}`, and anything but an object or an array is refused.
 */
export function jsonBody(limitBytes: number) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (bodiless(ctx)) {
      await next();
      return;
    }
    if (ctx.request.type !== '' && !ctx.is(JSON_TYPES)) {
      throw new UnsupportedMediaTypeError('request body must be application/json');
    }
    if (ctx.request.type === '' && ctx.request.length > 0) {
      throw new UnsupportedMediaTypeError('request body must be application/json');
    }
    // The body is decoded as UTF-8 whatever the header says: another charset would be misread, not converted.
    const charset = ctx.request.charset;
    if (charset !== '' && !/^utf-?8$/i.test(charset)) {
      throw new UnsupportedMediaTypeError('request body must be UTF-8 (charset=utf-8 or none)');
    }
    if (ctx.is(JSON_TYPES)) {
      const text = decodeUtf8(await readBody(ctx, limitBytes));
      if (text === '') {
        (ctx.request as { body?: unknown }).body = {};
      } else {
        if (!STRICT_START.test(text)) throw new InvalidJsonError('request body is not valid JSON (an object or array)');
        (ctx.request as { body?: unknown }).body = parseJson(text, 'request body');
      }
    }
    await next();
  };
}

/**
 * A request that announces a JSON body but has none at all (neither Content-Length nor Transfer-Encoding, as `curl -X
 * POST -H 'Content-Type: application/json'` sends it): it is taken as an absent body, which the route's schema reads as
 * `{}`, as for the same request without Content-Type. Koa's `ctx.is` answers null for a request without a body, so
 * it would otherwise be refused as not JSON (415).
 */
function bodiless(ctx: Context): boolean {
  return (
    ctx.request.type === 'application/json' && ctx.get('content-length') === '' && ctx.get('transfer-encoding') === ''
  );
}

/** The body's bytes, inflated; raw-body's errors (413 over the limit, aborted, length mismatch) go to the handler. */
async function readBody(ctx: Context, limitBytes: number): Promise<Buffer> {
  const encoding = ctx.get('content-encoding') || 'identity';
  const length = ctx.get('content-length');
  // The announced length is checked against the bytes received, and against the limit before any is read.
  return getRawBody(inflate(ctx.req), {
    limit: limitBytes,
    ...(length !== '' && encoding === 'identity' ? { length: Number(length) } : {}),
  });
}

function decodeUtf8(bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new InvalidJsonError('request body is not valid UTF-8');
  }
}

/**
 * Reads a JSON text as strictly as every body of the API (and the console's rule set): nested no deeper than
 * `LIMITS.jsonDepth` (checked before any recursive reader sees the text), valid JSON, no object repeating a key
 * (`JSON.parse` would keep the last one silently, where another reader of the same text may keep the first) and no
 * `__proto__` key, and no value that cannot be stored (`refuseUnstorableValues`). `what` names the text in messages.
 */
export function parseJson(text: string, what: string): unknown {
  refuseDeepNesting(text, what);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidJsonError(`${what} is not valid JSON`);
  }
  refuseDuplicateKeys(text);
  refuseUnstorableValues(value, []);
  return value;
}

/** Where the next `"`, `{`, `[`, `}` or `]` is outside strings, and the next `"` or `\` inside one. */
const STRUCTURE = /["[\]{}]/g;
const STRING_END = /["\\]/g;

/**
 * Throws `invalid_json` when objects and arrays in the JSON `text` nest deeper than `LIMITS.jsonDepth`. An iterative
 * scan of the text (brackets inside strings do not count), cheap enough for any body, so that the recursive readers
 * after it (the duplicate-key scan, schemas, serialisers) only ever see shallow values: ten thousand nested arrays
 * overflow jsonc-parser's stack.
 */
export function refuseDeepNesting(text: string, what: string): void {
  let depth = 0;
  let at = 0;
  for (;;) {
    STRUCTURE.lastIndex = at;
    const found = STRUCTURE.exec(text);
    if (!found) return;
    const char = found[0];
    at = found.index + 1;
    if (char === '"') {
      // Skip the string: a backslash escapes the character after it (`\"` does not end the string).
      for (;;) {
        STRING_END.lastIndex = at;
        const end = STRING_END.exec(text);
        if (!end) return;
        at = end.index + (end[0] === '"' ? 1 : 2);
        if (end[0] === '"') break;
      }
    } else if (char === '{' || char === '[') {
      depth += 1;
      if (depth > LIMITS.jsonDepth) {
        throw new InvalidJsonError(
          `${what} is nested too deeply: at most ${LIMITS.jsonDepth} levels of objects and arrays`,
        );
      }
    } else {
      depth -= 1;
    }
  }
}

/**
 * Throws `invalid_json` naming every key (up to 20) that appears twice in one object of the JSON `text`, and every
 * `__proto__` key: once parsed it is an own property, but spread or merged into another object it would set that
 * object's prototype.
 */
export function refuseDuplicateKeys(text: string): void {
  const repeated: Issue[] = [];
  const forbidden: Issue[] = [];
  const open: Array<Set<string>> = [];
  visit(text, {
    onObjectBegin: () => {
      open.push(new Set());
    },
    onObjectEnd: () => {
      open.pop();
    },
    onObjectProperty: (
      property: string,
      _offset: number,
      _length: number,
      _line: number,
      _column: number,
      pathOf: () => JSONPath,
    ) => {
      const keys = open[open.length - 1];
      if (!keys) return;
      if (keys.has(property) && repeated.length < 20) {
        repeated.push({ path: [...pathOf(), property], message: 'duplicate key', code: 'duplicate_key' });
      }
      if (property === '__proto__' && forbidden.length < 20) {
        forbidden.push({
          path: [...pathOf(), property],
          message: 'the key __proto__ is not allowed',
          code: 'forbidden_key',
        });
      }
      keys.add(property);
    },
  });
  if (repeated.length > 0)
    throw new InvalidJsonError('request body repeats a key in an object', [...repeated, ...forbidden]);
  if (forbidden.length > 0) throw new InvalidJsonError('request body has a __proto__ key', forbidden);
}

/** A UTF-16 code unit of a surrogate pair that has no partner: `u` regexes match surrogates only when unpaired. */
const LONE_SURROGATE = /\p{Surrogate}/u;

function textProblem(value: string): string | undefined {
  if (value.includes('\0')) return 'must not contain a NUL character';
  if (LONE_SURROGATE.test(value)) return 'must be well-formed Unicode (it has a lone surrogate)';
  return undefined;
}

/**
 * Refuses values that cannot be stored or compared faithfully anywhere in a body, query or path, naming the field: in
 * a string (or key), a NUL character (PostgreSQL, under FerretDB, cannot store one in a JSON value, so it would
 * otherwise fail deep in the pipeline) and a lone surrogate (`\ud800` in JSON), which every UTF-8 encoder on the way
 * (hashing, protobuf, BSON) replaces with U+FFFD, so that `x\ud800` and `x\udfff` would become the same id; and a
 * number out of range (`1e400` parses as Infinity, which JSON has no spelling for: it would be stored as null).
 */
export function refuseUnstorableValues(root: unknown, rootPath: Array<string | number>): void {
  const issues: Issue[] = [];
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value: root, path: rootPath }];
  while (stack.length > 0 && issues.length < 20) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) issues.push({ path, message: problem });
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) issues.push({ path, message: 'must be a finite number (it is out of range)' });
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push({ value: item, path: [...path, index] }));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        const problem = textProblem(key);
        if (problem) issues.push({ path, message: `keys ${problem}` });
        stack.push({ value: item, path: [...path, key] });
      }
    }
  }
  if (issues.length > 0) throw new ValidationError('request has values that cannot be stored', issues);
}
