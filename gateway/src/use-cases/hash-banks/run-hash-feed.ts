import type { HashFeedView } from '../../routes/hash-banks/hash-feeds.schema';
import { toFeedView } from './feed-views';
import { callFor, type BankCaller } from './views';

/** Makes a feed due now: its run starts within a poll of a moderator. */
export async function runHashFeed(caller: BankCaller, bankId: string, feedId: string): Promise<HashFeedView> {
  return toFeedView(await callFor(caller, 'runHashFeed', { bankId, feedId }));
}
