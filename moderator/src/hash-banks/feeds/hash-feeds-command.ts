import { readFile } from 'node:fs/promises';
import { UsageError } from '../../admin/dead-letters-command';
import type { FeedDoc } from './feed-store';
import type { FeedUseCases } from './feed-use-cases';

export const HASH_FEEDS_USAGE = `usage:
  hash-feeds list <tenantId> <bankId>                     the bank's feeds and their last runs
  hash-feeds add <tenantId> <bankId> <file|stopncii|ncmec> [--url URL] [--interval S] [--credentials file.json]
                                                          a scheduled feed (credentials read from a file, sealed)
  hash-feeds run <tenantId> <bankId> <feedId>             run it within a poll of a moderator
  hash-feeds enable|disable <tenantId> <bankId> <feedId>
  hash-feeds delete <tenantId> <bankId> <feedId>          the feed goes; the hashes it brought stay`;

/**
 * The operator's hash feed commands (the API's use cases, so the same checks apply); returns what the CLI prints.
 * Credentials come from a file, never from the command line (shell history), and are never printed.
 */
export async function hashFeedsCommand(
  feeds: Pick<FeedUseCases, 'list' | 'create' | 'update' | 'delete' | 'run'>,
  args: readonly string[],
): Promise<unknown> {
  const [verb, tenantId, bankId, ...rest] = args;
  if (!tenantId || !bankId) throw new UsageError(HASH_FEEDS_USAGE);
  switch (verb) {
    case 'list':
      if (rest.length !== 0) throw new UsageError(HASH_FEEDS_USAGE);
      return (await feeds.list(tenantId, bankId)).map(printable);
    case 'add': {
      const [source, ...flags] = rest;
      if (!source) throw new UsageError(HASH_FEEDS_USAGE);
      const options = parseFlags(flags, ['--url', '--interval', '--credentials']);
      const interval = options['--interval'] ?? '3600';
      if (!/^\d{1,7}$/.test(interval)) throw new UsageError('--interval is a number of seconds');
      const credentials = options['--credentials'];
      return printable(
        await feeds.create(tenantId, bankId, {
          source,
          url: options['--url'],
          intervalS: Number(interval),
          ...(credentials ? { credentialsJson: await readFile(credentials, 'utf8') } : {}),
        }),
      );
    }
    case 'run':
    case 'enable':
    case 'disable':
    case 'delete': {
      const [feedId] = rest;
      if (!feedId || rest.length !== 1) throw new UsageError(HASH_FEEDS_USAGE);
      if (verb === 'run') return printable(await feeds.run(tenantId, bankId, feedId));
      if (verb === 'delete') {
        await feeds.delete(tenantId, bankId, feedId);
        return { feedId, deleted: true };
      }
      return printable(await feeds.update(tenantId, bankId, feedId, { enabled: verb === 'enable' }));
    }
    default:
      throw new UsageError(HASH_FEEDS_USAGE);
  }
}

/** A feed as printed: whether it has credentials, never them. */
function printable(feed: FeedDoc): Omit<FeedDoc, 'credentials'> & { hasCredentials: boolean } {
  const { credentials, ...rest } = feed;
  return { ...rest, hasCredentials: credentials !== undefined };
}

function parseFlags(args: readonly string[], valued: readonly string[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (let i = 0; i < args.length; i += 2) {
    const arg = args[i]!;
    if (!valued.includes(arg) || args[i + 1] === undefined) {
      throw new UsageError(`unknown option "${arg}"\n${HASH_FEEDS_USAGE}`);
    }
    out[arg] = args[i + 1];
  }
  return out;
}
