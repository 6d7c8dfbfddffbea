import type { EndpointStateDoc, WebhookEndpointDoc } from '@vigil/proto';
import type { Context } from 'koa';
import type { ApiRouter } from '../../http/api-router';
import { LimitExceededError, NotFoundError, ValidationError } from '../../errors';
import { body, query } from '../../http/validate';
import { idParam } from '../../http/params';
import { enableEndpoint } from '../../use-cases/enable-endpoint';
import { replayEndpoint } from '../../use-cases/replay-endpoint';
import { retryDelivery } from '../../use-cases/retry-delivery';
import { principalOf, type RouteDeps } from '../deps';
import {
  CommandAccepted,
  CreateEndpointBody,
  DeletedResponse,
  DeliveryList,
  EndpointData,
  EndpointList,
  ListQuery,
  ReplayBody,
  RotateSecretBody,
  RotateSecretResponse,
  UpdateEndpointBody,
} from './webhook-endpoints.schema';
import { toDeliveryView, toEndpointView } from '../shared/presenters';

/** The notifier's state once it applied an EnableEndpoint (its `enableEndpoint` clears these three fields). */
function reEnabled(state: EndpointStateDoc | null): EndpointStateDoc | null {
  return state && { ...state, disabledAt: undefined, disabledReason: undefined, failingSince: undefined };
}

export function webhookEndpointRoutes(api: ApiRouter, deps: RouteDeps): void {
  const { webhooks } = deps;

  const endpointOf = async (ctx: Context): Promise<WebhookEndpointDoc> => {
    const doc = await webhooks.get(principalOf(ctx).tenantId, idParam(ctx));
    if (!doc) throw new NotFoundError('webhook endpoint not found');
    return doc;
  };

  /** An unknown cursor is refused, as on every list (records, users, appeals), rather than read as the end. */
  const invalidCursor = (message: string) =>
    new ValidationError('invalid starting_after cursor', [{ path: ['starting_after'], message }]);

  const accepted = (ctx: Context, id: string): void => {
    ctx.status = 202;
    ctx.body = { message: 'Accepted', id };
  };

  api.route(
    {
      method: 'post',
      path: '/webhook-endpoints',
      tag: 'webhooks',
      summary: 'Register a webhook endpoint; the response shows its signing secret, once.',
      body: CreateEndpointBody,
      status: 201,
      response: EndpointData,
    },
    async (ctx) => {
      const input = body(ctx, CreateEndpointBody);
      const { tenantId } = principalOf(ctx);
      const limit = deps.maxEndpointsPerTenant;
      const full = () => new LimitExceededError(`a tenant has at most ${limit} webhook endpoints`, { limit });
      if ((await webhooks.count(tenantId)) >= limit) throw full();
      await deps.endpointUrls.check(input.url);
      const doc = await webhooks.create(tenantId, input);
      // Count then insert is not atomic: two racing registrations can both pass the first check. Counting again after
      // the insert and withdrawing our own endpoint keeps the cap (at worst both withdraw and the client retries).
      if ((await webhooks.count(tenantId)) > limit) {
        await webhooks.remove(tenantId, doc._id);
        throw full();
      }
      ctx.status = 201;
      ctx.body = { data: { ...toEndpointView(doc, null), secret: doc.secrets[0]?.secret } };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/webhook-endpoints',
      tag: 'webhooks',
      summary: 'List webhook endpoints.',
      query: ListQuery,
      status: 200,
      response: EndpointList,
    },
    async (ctx) => {
      const q = query(ctx, ListQuery);
      const page = await webhooks.list(principalOf(ctx).tenantId, q.limit, q.starting_after);
      if (!page) throw invalidCursor('not a webhook endpoint of this tenant');
      const states = await Promise.all(page.docs.map((doc) => webhooks.state(doc._id)));
      ctx.body = {
        data: page.docs.map((doc, index) => toEndpointView(doc, states[index] ?? null)),
        has_more: page.hasMore,
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/webhook-endpoints/:id',
      tag: 'webhooks',
      summary: 'Get a webhook endpoint with its delivery health.',
      status: 200,
      response: EndpointData,
    },
    async (ctx) => {
      const doc = await endpointOf(ctx);
      ctx.body = { data: toEndpointView(doc, await webhooks.state(doc._id)) };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/webhook-endpoints/:id',
      tag: 'webhooks',
      summary: 'Change a webhook endpoint; `enabled: true` also re-enables one the notifier disabled.',
      body: UpdateEndpointBody,
      status: 200,
      response: EndpointData,
    },
    async (ctx) => {
      const patch = body(ctx, UpdateEndpointBody);
      if (patch.url !== undefined) await deps.endpointUrls.check(patch.url);
      const clean = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
      const doc = await webhooks.update(principalOf(ctx).tenantId, idParam(ctx), clean);
      if (!doc) throw new NotFoundError('webhook endpoint not found');
      if (patch.enabled === true) await enableEndpoint(deps, doc.tenantId, doc._id);
      const state = await webhooks.state(doc._id);
      // The notifier clears its verdict (disabled, failing) when it applies the EnableEndpoint just queued, moments
      // later: the answer shows the state this PATCH leaves, as a GET then reads it, not the verdict it undid.
      ctx.body = { data: toEndpointView(doc, patch.enabled === true ? reEnabled(state) : state) };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/webhook-endpoints/:id',
      tag: 'webhooks',
      summary: 'Delete a webhook endpoint.',
      status: 200,
      response: DeletedResponse,
    },
    async (ctx) => {
      const removed = await webhooks.remove(principalOf(ctx).tenantId, idParam(ctx));
      if (!removed) throw new NotFoundError('webhook endpoint not found');
      ctx.body = { id: idParam(ctx), deleted: true };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/webhook-endpoints/:id/rotate-secret',
      tag: 'webhooks',
      summary: 'Start signing with a new secret; the previous one keeps signing for `overlapSeconds`.',
      body: RotateSecretBody,
      status: 200,
      response: RotateSecretResponse,
    },
    async (ctx) => {
      const input = body(ctx, RotateSecretBody);
      const doc = await endpointOf(ctx);
      const rotated = await webhooks.rotateSecret(doc, input.overlapSeconds);
      if (!rotated) throw new NotFoundError('webhook endpoint not found');
      ctx.body = {
        id: doc._id,
        secret: rotated.secret,
        previousSecretExpiresAt: rotated.previousExpiresAt.toISOString(),
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/webhook-endpoints/:id/deliveries',
      tag: 'webhooks',
      summary: "An endpoint's delivery log, newest first.",
      query: ListQuery,
      status: 200,
      response: DeliveryList,
    },
    async (ctx) => {
      const q = query(ctx, ListQuery);
      const doc = await endpointOf(ctx);
      const page = await webhooks.listDeliveries(doc.tenantId, doc._id, q.limit, q.starting_after);
      if (!page) throw invalidCursor('not a delivery of this endpoint');
      ctx.body = { data: page.docs.map(toDeliveryView), has_more: page.hasMore };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/deliveries/:id/retry',
      tag: 'webhooks',
      summary:
        'Send a delivery again now with a fresh retry schedule (asynchronous); 409 conflict while it is being sent, ' +
        '404 not_found once its endpoint is deleted, 409 conflict while its endpoint is switched off (enabled: false). ' +
        'Retries asked for before the next attempt starts are answered ' +
        'by that one attempt.',
      status: 202,
      response: CommandAccepted,
    },
    async (ctx) => {
      accepted(ctx, await retryDelivery(deps, principalOf(ctx).tenantId, idParam(ctx)));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/webhook-endpoints/:id/replay',
      tag: 'webhooks',
      summary:
        "Re-send an endpoint's failed deliveries created since a time, each with a fresh retry schedule (asynchronous).",
      body: ReplayBody,
      status: 202,
      response: CommandAccepted,
    },
    async (ctx) => {
      const input = body(ctx, ReplayBody);
      accepted(ctx, await replayEndpoint(deps, principalOf(ctx).tenantId, idParam(ctx), new Date(input.since)));
    },
  );
}
