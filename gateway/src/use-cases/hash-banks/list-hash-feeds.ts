import type { HashFeedView } from '../../routes/hash-banks/hash-feeds.schema';
import { toFeedView } from './feed-views';
import { callFor, type BankCaller } from './views';

/** A bank's feeds, each with its last run. */
export async function listHashFeeds(caller: BankCaller, bankId: string): Promise<HashFeedView[]> {
  const { feeds } = await callFor(caller, 'listHashFeeds', { bankId });
  return feeds.map(toFeedView);
}
