import { isUtf8 } from 'node:buffer';
import { ValidationError, type Issue } from '../errors';

const ESCAPES = /((?:%[0-9a-fA-F]{2})+)/;

/** The bytes a percent-encoded text stands for: escapes as bytes, other characters as UTF-8, `%zz` as it is. */
function percentDecoded(text: string): Buffer {
  return Buffer.concat(
    text
      .split(ESCAPES)
      .map((part, index) => (index % 2 === 1 ? Buffer.from(part.replaceAll('%', ''), 'hex') : Buffer.from(part))),
  );
}

/** The text for a message: bytes that are not UTF-8 as U+FFFD, `+` as a space, as the query parser reads it. */
const lossy = (text: string): string => percentDecoded(text.replaceAll('+', ' ')).toString('utf8');

/**
 * Refuses percent-escapes that do not decode as UTF-8 in the query string or in a path parameter, naming the
 * parameter (`['query', name]`, `['path', name]`): the query parser would read them as U+FFFD, so that
 * `clientId=%ED%A0%80` (a lone surrogate as it arrives on the wire) would match a client id of three U+FFFD, and the
 * router would keep the escape as text. `captures` are the raw path parameters in the order of `names`.
 */
export function refuseUndecodableUrl(querystring: string, captures: readonly string[], names: readonly string[]): void {
  const issues: Issue[] = [];
  const message = 'must be UTF-8 (it has percent-encoded bytes that are not)';
  for (const pair of querystring.split('&')) {
    if (issues.length >= 20) break;
    const equals = pair.indexOf('=');
    const name = equals === -1 ? pair : pair.slice(0, equals);
    const value = equals === -1 ? '' : pair.slice(equals + 1);
    if (!isUtf8(percentDecoded(name))) issues.push({ path: ['query'], message: `parameter names ${message}` });
    else if (!isUtf8(percentDecoded(value))) issues.push({ path: ['query', lossy(name)], message });
  }
  captures.forEach((capture, index) => {
    if (capture !== undefined && !isUtf8(percentDecoded(capture))) {
      issues.push({ path: ['path', names[index] ?? index], message });
    }
  });
  if (issues.length > 0) throw new ValidationError('request has text that is not UTF-8', issues);
}
