import type { CollectionSpec, ServiceName } from '../collections';

/**
 * Which collections a service's source touches, and how, read from the TypeScript text alone (no compiler, no store).
 *
 * A collection is touched where its key appears as `COLLECTIONS.<key>`, or its name as the string literal in
 * `.collection('<name>')`. Comments are blanked first, so a comment naming a collection touches nothing. Each touch is
 * a read or a write:
 * - `<db>.collection(X).method(…)`: the method decides (WRITE_METHODS are writes).
 * - `this.h = <db>.collection(X)` or `const h = <db>.collection(X)`: a write when the file calls a write method on
 *   `h` (`this.h.updateOne(`). When the file hands `h` to something else (`insertUnlessExists(this.h, …)`), that
 *   callee may write, so the file decides, as below.
 * - Anything else (a handle passed straight to a helper such as `new DueQueue(db.collection(X))`, a name passed as an
 *   argument or kept as a value): the file decides. It is a write when the file calls any write method or write helper
 *   at all, else a read.
 * The file-level rule can only over-count writes, never miss one made in the file: a false write fails the test and
 * is fixed by reading through a handle of its own. Not seen: a write made in another file through a handle or a name
 * that file was given (a store module hands its private handles to nothing outside its service; the gateway's
 * RevisedDocs, given a name, opens its own handle). Such a helper is built by its owner only, which keeps this true.
 */

const WRITE_METHODS = [
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'replaceOne',
  'deleteOne',
  'deleteMany',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
  'bulkWrite',
  'createIndex',
  'createIndexes',
  'dropIndex',
  'dropIndexes',
  'drop',
  'rename',
  'initializeOrderedBulkOp',
  'initializeUnorderedBulkOp',
] as const;

/** Helpers (proto's and the services') that write through the handle they are given. */
const WRITE_HELPERS = [
  'insertEach',
  'insertInOrder',
  'insertUnlessExists',
  'insertIgnoringDuplicates',
  'upsertById',
] as const;

type Access = 'read' | 'write';

export interface Touch {
  readonly file: string;
  /** The key in COLLECTION_MAP, or the literal name when no key has it. */
  readonly collection: string;
  readonly access: Access;
}

export interface Violation {
  readonly service: ServiceName;
  readonly file: string;
  readonly collection: string;
  readonly problem: string;
}

const WRITE = new Set<string>(WRITE_METHODS);
const anyWrite = new RegExp(`\\.\\s*(?:${WRITE_METHODS.join('|')})\\s*\\(|\\b(?:${WRITE_HELPERS.join('|')})\\s*\\(`);

/** The text with every comment replaced by spaces (offsets and line breaks kept); strings are left as they are. */
function blankComments(text: string): string {
  const out = text.split('');
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      while (i < text.length && text[i] !== '\n') out[i++] = ' ';
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      for (; i < stop; i++) if (text[i] !== '\n') out[i] = ' ';
    } else if (c === "'" || c === '"' || c === '`') {
      i++;
      while (i < text.length && text[i] !== c) i += text[i] === '\\' ? 2 : 1;
      i++;
    } else {
      i++;
    }
  }
  return out.join('');
}

/** The offset just past the parenthesis that closes the one at `open`. */
function closeOf(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return i + 1;
  }
  return text.length;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every collection the file touches, with the access each touch makes. */
export function scanSource(file: string, source: string, map: Readonly<Record<string, CollectionSpec>>): Touch[] {
  const text = blankComments(source);
  const keyOfName = new Map(Object.entries(map).map(([key, spec]) => [spec.name, key]));
  const fileWrites = anyWrite.test(text);
  const fileAccess: Access = fileWrites ? 'write' : 'read';
  const touches: Touch[] = [];

  const refs: { at: number; end: number; collection: string }[] = [];
  for (const m of text.matchAll(/\bCOLLECTIONS\.(\w+)/g)) {
    refs.push({ at: m.index, end: m.index + m[0].length, collection: m[1] ?? '' });
  }
  for (const m of text.matchAll(/\.collection\s*(?:<[^()]*>)?\s*\(\s*(['"`])([^'"`]+)\1/g)) {
    const name = m[2] ?? '';
    const at = m.index + m[0].length - name.length - 2;
    refs.push({ at, end: m.index + m[0].length, collection: keyOfName.get(name) ?? name });
  }

  for (const ref of refs) {
    // The statement's last few hundred characters are enough to see `h = db.collection<T>(` and keep the match cheap.
    const from = Math.max(0, ref.at - 400);
    const before = text.slice(from, ref.at);
    const call =
      /((?:const|let|var)\s+(\w+)\s*(?::[^=;]+)?=|this\.(\w+)\s*=)?\s*[\w$.\s]*?\.collection\s*(?:<[^()]*>)?\s*\(\s*$/.exec(
        before,
      );
    if (!call) {
      touches.push({ file, collection: ref.collection, access: fileAccess });
      continue;
    }
    const end = closeOf(text, from + before.lastIndexOf('('));
    const chained = /^\s*\.\s*(\w+)\s*\(/.exec(text.slice(end));
    if (chained) {
      touches.push({ file, collection: ref.collection, access: WRITE.has(chained[1] ?? '') ? 'write' : 'read' });
      continue;
    }
    const local = call[2];
    const field = call[3];
    if (!local && !field) {
      touches.push({ file, collection: ref.collection, access: fileAccess });
      continue;
    }
    const handle = field ? `\\bthis\\s*\\.\\s*${escape(field)}` : `(?<![\\w$.])${escape(local ?? '')}`;
    const writes = new RegExp(`${handle}\\s*\\.\\s*(?:${WRITE_METHODS.join('|')})\\s*\\(`).test(text);
    const handedOn = new RegExp(`[(,]\\s*${handle}\\s*[,)]`).test(text);
    touches.push({ file, collection: ref.collection, access: writes || (handedOn && fileWrites) ? 'write' : 'read' });
  }
  return touches;
}

/** What the map lets `service` do with a collection: own it, read it, write it as an exception, or nothing. */
function allowed(spec: CollectionSpec | undefined, service: ServiceName): { read: boolean; write: boolean } {
  if (!spec) return { read: false, write: false };
  if (spec.owner === service) return { read: true, write: true };
  const write = (spec.writers ?? []).some((use) => use.service === service);
  return { read: write || spec.readers.some((use) => use.service === service), write };
}

/** Touches the map does not allow: a collection it does not give the service, or a write where it gives a read. */
export function violations(
  service: ServiceName,
  touches: readonly Touch[],
  map: Readonly<Record<string, CollectionSpec>>,
): Violation[] {
  const found: Violation[] = [];
  for (const touch of touches) {
    const spec = map[touch.collection];
    const may = allowed(spec, service);
    if (!spec) {
      found.push({ service, file: touch.file, collection: touch.collection, problem: 'is not in COLLECTION_MAP' });
    } else if (!may.read) {
      found.push({ service, file: touch.file, collection: touch.collection, problem: 'is neither owned nor read' });
    } else if (touch.access === 'write' && !may.write) {
      found.push({ service, file: touch.file, collection: touch.collection, problem: 'is written but only read' });
    }
  }
  return found;
}
