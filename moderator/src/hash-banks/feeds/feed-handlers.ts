import type { ModerationServiceHandlers } from '@vigil/proto';
import type { HashFeed } from '@vigil/proto/dist/generated/vigil/moderation/v1/HashFeed';
import { FailedPreconditionError } from '../../domain/errors';
import { required, unary, type HandlerDeps } from '../../grpc/unary';
import type { FeedDoc } from './feed-store';
import type { FeedUseCases } from './feed-use-cases';

type HashFeedMethods = 'CreateHashFeed' | 'ListHashFeeds' | 'UpdateHashFeed' | 'DeleteHashFeed' | 'RunHashFeed';

/** The hash feed methods of ModerationService. No answer carries a credential: only whether the feed has one. */
export function createHashFeedHandlers(deps: HandlerDeps): Pick<ModerationServiceHandlers, HashFeedMethods> {
  const feeds = (): FeedUseCases => {
    if (!deps.hashFeeds) throw new FailedPreconditionError('hash feeds are not enabled on this moderator');
    return deps.hashFeeds;
  };
  const bankId = (request: { bankId?: string }) => required(request.bankId, 'bank_id');
  const feedId = (request: { feedId?: string }) => required(request.feedId, 'feed_id');
  return {
    CreateHashFeed: unary(deps, 'CreateHashFeed', async (request, tenantId) =>
      toFeedMessage(
        await feeds().create(tenantId, bankId(request), {
          source: request.source ?? '',
          url: request.url,
          intervalS: request.intervalSeconds ?? 0,
          enabled: request.enabled,
          credentialsJson: request.credentialsJson,
        }),
      ),
    ),
    ListHashFeeds: unary(deps, 'ListHashFeeds', async (request, tenantId) => ({
      feeds: (await feeds().list(tenantId, bankId(request))).map(toFeedMessage),
    })),
    UpdateHashFeed: unary(deps, 'UpdateHashFeed', async (request, tenantId) =>
      toFeedMessage(
        await feeds().update(tenantId, bankId(request), feedId(request), {
          url: request.url,
          intervalS: request.intervalSeconds,
          enabled: request.enabled,
          credentialsJson: request.credentialsJson,
          clearCredentials: request.clearCredentials,
        }),
      ),
    ),
    DeleteHashFeed: unary(deps, 'DeleteHashFeed', async (request, tenantId) => {
      await feeds().delete(tenantId, bankId(request), feedId(request));
      return {};
    }),
    RunHashFeed: unary(deps, 'RunHashFeed', async (request, tenantId) =>
      toFeedMessage(await feeds().run(tenantId, bankId(request), feedId(request))),
    ),
  };
}

function toFeedMessage(feed: FeedDoc): HashFeed {
  const run = feed.lastRun;
  return {
    id: feed._id,
    bankId: feed.bankId,
    source: feed.source,
    url: feed.url,
    intervalSeconds: feed.intervalS,
    enabled: feed.enabled,
    hasCredentials: feed.credentials !== undefined,
    ...(run
      ? {
          lastRun: {
            state: run.state,
            at: run.at.toISOString(),
            added: run.added,
            withdrawn: run.withdrawn,
            duplicates: run.duplicates,
            failure: run.failure,
            message: run.message,
            failures: feed.failures,
          },
        }
      : {}),
    nextRunAt: feed.dueAt.toISOString(),
    createdAt: feed.createdAt.toISOString(),
    updatedAt: feed.updatedAt.toISOString(),
  };
}
