import type { Context, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { visit, type JSONPath } from 'jsonc-parser';
import { LIMITS } from '@vigil/proto';
import { InvalidJsonError, UnsupportedMediaTypeError, ValidationError, type Issue } from '../errors';

const JSON_TYPES = ['application/json'];
const UNPARSED = Symbol.for('unparsedBody');

/**
 * Parses a JSON request body (and nothing else) up to `limitBytes`. A body of another type, or announced in another
 * charset than UTF-8, is refused with 415 before it is read; a body without any content type or length is taken as
 * absent and left to the schema. A body nested deeper than `LIMITS.jsonDepth` is refused (400 `invalid_json`) before
 * any recursive reader sees it, and so is a body whose objects repeat a key: `JSON.parse` would keep the last one
 * silently, where another reader of the same text may keep the first.
 */
export function jsonBody(limitBytes: number) {
  const parse = koaBody({
    json: true,
    urlencoded: false,
    text: false,
    multipart: false,
    jsonStrict: true,
    jsonLimit: limitBytes,
    includeUnparsed: true,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.request.type !== '' && !ctx.is(JSON_TYPES)) {
      throw new UnsupportedMediaTypeError('request body must be application/json');
    }
    if (ctx.request.type === '' && ctx.request.length > 0) {
      throw new UnsupportedMediaTypeError('request body must be application/json');
    }
    // The body parser decodes as UTF-8 whatever the header says: another charset would be misread, not converted.
    const charset = ctx.request.charset;
    if (charset !== '' && !/^utf-?8$/i.test(charset)) {
      throw new UnsupportedMediaTypeError('request body must be UTF-8 (charset=utf-8 or none)');
    }
    await parse(ctx as never, async () => {
      const body = (ctx.request as { body?: Record<symbol, unknown> }).body;
      const raw = body?.[UNPARSED];
      if (typeof raw === 'string') {
        refuseDeepNesting(raw, 'request body');
        refuseDuplicateKeys(raw);
      }
      refuseIllFormedText(body, []);
      await next();
    });
  };
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

/** Throws `invalid_json` naming every key (up to 20) that appears twice in one object of the JSON `text`. */
export function refuseDuplicateKeys(text: string): void {
  const issues: Issue[] = [];
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
      if (keys.has(property) && issues.length < 20) {
        issues.push({ path: [...pathOf(), property], message: 'duplicate key', code: 'duplicate_key' });
      }
      keys.add(property);
    },
  });
  if (issues.length > 0) throw new InvalidJsonError('request body repeats a key in an object', issues);
}

/** A UTF-16 code unit of a surrogate pair that has no partner: `u` regexes match surrogates only when unpaired. */
const LONE_SURROGATE = /\p{Surrogate}/u;

function textProblem(value: string): string | undefined {
  if (value.includes('\0')) return 'must not contain a NUL character';
  if (LONE_SURROGATE.test(value)) return 'must be well-formed Unicode (it has a lone surrogate)';
  return undefined;
}

/**
 * Refuses text that cannot be stored or compared faithfully in any string (or key) of a body, query or path, naming
 * the field: a NUL character (PostgreSQL, under FerretDB, cannot store one in a JSON value, so it would otherwise fail
 * deep in the pipeline), and a lone surrogate (`\ud800` in JSON), which every UTF-8 encoder on the way (hashing,
 * protobuf, BSON) replaces with U+FFFD, so that `x\ud800` and `x\udfff` would become the same id.
 */
export function refuseIllFormedText(root: unknown, rootPath: Array<string | number>): void {
  const issues: Issue[] = [];
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value: root, path: rootPath }];
  while (stack.length > 0 && issues.length < 20) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) issues.push({ path, message: problem });
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
  if (issues.length > 0) throw new ValidationError('request has text that cannot be stored', issues);
}
