import type { HashFeed__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/HashFeed';
import { FeedFailure, FeedRunState, FeedSource } from '@vigil/proto';
import type { HashFeedView } from '../../routes/hash-banks/hash-feeds.schema';

export function toFeedView(feed: HashFeed__Output): HashFeedView {
  const run = feed.lastRun;
  return {
    id: feed.id,
    bank: feed.bankId,
    source: FeedSource.parse(feed.source),
    url: feed.url,
    intervalSeconds: feed.intervalSeconds,
    enabled: feed.enabled,
    hasCredentials: feed.hasCredentials,
    lastRun: run
      ? {
          state: FeedRunState.parse(run.state),
          at: run.at,
          added: run.added,
          withdrawn: run.withdrawn,
          duplicates: run.duplicates,
          failure: run.failure ? FeedFailure.parse(run.failure) : null,
          message: run.message ?? null,
          failures: run.failures,
        }
      : null,
    nextRunAt: feed.nextRunAt,
    createdAt: feed.createdAt,
    updatedAt: feed.updatedAt,
  };
}
