import type { Context } from 'koa';
import { HASH_FEED_LIMITS } from '@vigil/proto';
import { NotFoundError } from '../../errors';
import type { ApiRouter } from '../../http/api-router';
import { requestIdOf } from '../../http/request-id';
import { body } from '../../http/validate';
import { createHashFeed } from '../../use-cases/hash-banks/create-hash-feed';
import { deleteHashFeed } from '../../use-cases/hash-banks/delete-hash-feed';
import { listHashFeeds } from '../../use-cases/hash-banks/list-hash-feeds';
import { runHashFeed } from '../../use-cases/hash-banks/run-hash-feed';
import { updateHashFeed } from '../../use-cases/hash-banks/update-hash-feed';
import type { BankCaller } from '../../use-cases/hash-banks/views';
import { principalOf, type RouteDeps } from '../deps';
import {
  CreateHashFeedBody,
  HashFeedData,
  HashFeedDeleted,
  HashFeedList,
  UpdateHashFeedBody,
} from './hash-feeds.schema';

function param(ctx: Context, name: 'id' | 'feedId', pattern: RegExp): string {
  const value = String((ctx.params as Record<string, string>)[name] ?? '');
  if (!pattern.test(value)) throw new NotFoundError(name === 'id' ? 'hash bank not found' : 'hash feed not found');
  return value;
}
const bankParam = (ctx: Context) => param(ctx, 'id', /^bnk_[0-9A-Z]{26}$/);
const feedParam = (ctx: Context) => param(ctx, 'feedId', /^fed_[0-9A-Z]{26}$/);

/**
 * A bank's feeds (docs/hash-banks.md#feeds-and-exchanges): a hash file at a URL, StopNCII or NCMEC, run on a schedule
 * by the moderator. Credentials go in and are never answered; a URL is checked against the webhook address rules
 * (https, or plain http to an allowed address) before the moderator checks it again on every connection.
 */
export function hashFeedRoutes(api: ApiRouter, deps: RouteDeps): void {
  const caller = (ctx: Context): BankCaller => ({
    moderator: deps.moderator,
    tenantId: principalOf(ctx).tenantId,
    requestId: requestIdOf(ctx),
  });
  const tag = 'hash-banks';
  const checkUrl = (url: string | undefined) =>
    url ? deps.endpointUrls.check(url, { field: 'url', name: 'feed url', httpsOnly: true }) : Promise.resolve();

  api.route(
    {
      method: 'get',
      path: '/hash-banks/:id/feeds',
      tag,
      summary: "The bank's feeds, each with its last run (state, time, hashes added and withdrawn, failure).",
      status: 200,
      response: HashFeedList,
    },
    async (ctx) => {
      ctx.body = { data: await listHashFeeds(caller(ctx), bankParam(ctx)) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/hash-banks/:id/feeds',
      tag,
      summary: `Schedule a feed into the bank (at most ${HASH_FEED_LIMITS.perBank}): a hash file at a URL, StopNCII or NCMEC.`,
      body: CreateHashFeedBody,
      status: 201,
      response: HashFeedData,
      errors: {
        409: '`conflict`: the bank has the most feeds it may have; `failed_precondition`: no key to store credentials.',
      },
    },
    async (ctx) => {
      const input = body(ctx, CreateHashFeedBody);
      await checkUrl(input.url);
      const feed = await createHashFeed(caller(ctx), bankParam(ctx), input);
      ctx.status = 201;
      ctx.body = { data: feed };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/hash-banks/:id/feeds/:feedId',
      tag,
      summary: "Change a feed's URL, interval, state or credentials (null removes a file feed's).",
      body: UpdateHashFeedBody,
      status: 200,
      response: HashFeedData,
    },
    async (ctx) => {
      const input = body(ctx, UpdateHashFeedBody);
      await checkUrl(input.url);
      ctx.body = { data: await updateHashFeed(caller(ctx), bankParam(ctx), feedParam(ctx), input) };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/hash-banks/:id/feeds/:feedId',
      tag,
      summary: 'Delete a feed; the hashes it brought stay in the bank.',
      status: 200,
      response: HashFeedDeleted,
    },
    async (ctx) => {
      const id = feedParam(ctx);
      await deleteHashFeed(caller(ctx), bankParam(ctx), id);
      ctx.body = { id, deleted: true };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/hash-banks/:id/feeds/:feedId/run',
      tag,
      summary: 'Run a feed now (within a poll of a moderator) instead of at its next scheduled time.',
      status: 202,
      response: HashFeedData,
      errors: { 409: '`failed_precondition`: the feed is disabled.' },
    },
    async (ctx) => {
      const feed = await runHashFeed(caller(ctx), bankParam(ctx), feedParam(ctx));
      ctx.status = 202;
      ctx.body = { data: feed };
    },
  );
}
