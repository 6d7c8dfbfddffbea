import { ValidationError } from '../../domain/errors';
import { parseHashCsv } from '../csv-import';
import { FeedError, type FeedHttp } from './feed-http';
import type { FeedPull, PullBank } from './feed-pull';

/** Validators longer than this are not kept (a server's ETag is short; this bounds what the feed document holds). */
const MAX_VALIDATOR = 200;

export interface FileFeed {
  url: string;
  etag?: string;
  lastModified?: string;
}

/**
 * Reads a hash file in HMA's CSV format (csv-import.ts): sent with the last run's validators, so an unchanged file is
 * answered 304 and costs nothing more. The file is taken whole or not at all: a bad row, an empty file or a file over
 * the import's bounds fails the run, and nothing is written.
 */
export async function pullFile(
  http: FeedHttp,
  feed: FileFeed,
  bank: PullBank,
  credentials: { authorization?: string } | undefined,
  signal?: AbortSignal,
): Promise<FeedPull> {
  const headers: Record<string, string> = { accept: 'text/csv, text/plain;q=0.9, */*;q=0.1' };
  if (feed.etag) headers['if-none-match'] = feed.etag;
  if (feed.lastModified) headers['if-modified-since'] = feed.lastModified;
  if (credentials?.authorization) headers.authorization = credentials.authorization;
  const answer = await http.expect('hash file', feed.url, { headers }, signal);
  if (answer.status === 304) return { kind: 'unchanged' };
  let rows;
  try {
    rows = parseHashCsv(answer.text, bank.kind);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const issues = (err.details?.issues ?? []) as { message: string }[];
    const first = issues[0]?.message;
    throw new FeedError('invalid_file', `${err.message}${first && first !== err.message ? `: ${first}` : ''}`);
  }
  const etag = answer.headers.etag;
  const lastModified = answer.headers['last-modified'];
  return {
    kind: 'full',
    rows,
    validators: {
      ...(etag && etag.length <= MAX_VALIDATOR ? { etag } : {}),
      ...(lastModified && lastModified.length <= MAX_VALIDATOR ? { lastModified } : {}),
    },
  };
}
