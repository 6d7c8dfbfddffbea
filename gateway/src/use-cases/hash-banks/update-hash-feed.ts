import type { HashFeedView, UpdateHashFeedBody } from '../../routes/hash-banks/hash-feeds.schema';
import { toFeedView } from './feed-views';
import { callFor, type BankCaller } from './views';

/** Changes a feed's URL, interval, state or credentials. */
export async function updateHashFeed(
  caller: BankCaller,
  bankId: string,
  feedId: string,
  input: UpdateHashFeedBody,
): Promise<HashFeedView> {
  const feed = await callFor(caller, 'updateHashFeed', {
    bankId,
    feedId,
    url: input.url,
    intervalSeconds: input.intervalSeconds,
    enabled: input.enabled,
    ...(input.credentials ? { credentialsJson: JSON.stringify(input.credentials) } : {}),
    clearCredentials: input.credentials === null,
  });
  return toFeedView(feed);
}
