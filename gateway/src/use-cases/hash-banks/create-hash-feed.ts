import type { CreateHashFeedBody, HashFeedView } from '../../routes/hash-banks/hash-feeds.schema';
import { toFeedView } from './feed-views';
import { callFor, type BankCaller } from './views';

/** Schedules a feed into a bank; its first run starts within a poll. The credentials travel once, to be sealed. */
export async function createHashFeed(
  caller: BankCaller,
  bankId: string,
  input: CreateHashFeedBody,
): Promise<HashFeedView> {
  const feed = await callFor(caller, 'createHashFeed', {
    bankId,
    source: input.source,
    url: input.url ?? '',
    intervalSeconds: input.intervalSeconds,
    enabled: input.enabled,
    ...(input.credentials ? { credentialsJson: JSON.stringify(input.credentials) } : {}),
  });
  return toFeedView(feed);
}
