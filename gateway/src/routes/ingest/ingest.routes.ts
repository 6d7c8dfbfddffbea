import { ulid } from 'ulid';
import { recordIdFor, userIdFor, type Command } from '@vigil/proto';
import type { Context } from 'koa';
import type { ApiRouter } from '../../http/api-router';
import { body } from '../../http/validate';
import { principalOf, requestIdOf, type RouteDeps } from '../deps';
import { AcceptedResponse, DeleteIngestBody, IngestBody, UserBody } from './ingest.schema';

/**
 * Ingest answers 202 only once Kafka acknowledged the command: an accepted command is durable. Commands about one
 * record share a key, so they reach the moderator in order (users: `tenant:user:clientId`). Keys stay short because
 * `clientId` is bounded (LIMITS.clientId): kafkajs hashes a key in time that grows with the square of its length.
 */
export function ingestRoutes(api: ApiRouter, deps: RouteDeps): void {
  const produce = (ctx: Context, key: string, make: (base: Omit<Command, 'type' | 'data'>) => Command) => {
    const command = make({
      id: ulid(),
      tenantId: principalOf(ctx).tenantId,
      issuedAt: new Date().toISOString(),
      correlationId: requestIdOf(ctx),
    });
    return deps.commands.send({ topic: deps.topics.ingest, key, id: command.id, type: command.type, value: command });
  };

  api.route(
    {
      method: 'post',
      path: '/ingest',
      tag: 'ingest',
      summary: 'Create or update a record for asynchronous moderation; the result arrives by webhook.',
      body: IngestBody,
      status: 202,
      response: AcceptedResponse,
    },
    async (ctx) => {
      const input = body(ctx, IngestBody);
      const { tenantId } = principalOf(ctx);
      await produce(ctx, `${tenantId}:${input.clientId}`, (base) => ({ ...base, type: 'IngestRecord', data: input }));
      ctx.status = 202;
      ctx.body = {
        message: 'Accepted',
        id: recordIdFor(tenantId, input.clientId),
        ...(input.user ? { user: userIdFor(tenantId, input.user.clientId) } : {}),
      };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/ingest',
      tag: 'ingest',
      summary: 'Delete a record by its clientId (asynchronous).',
      body: DeleteIngestBody,
      status: 202,
      response: AcceptedResponse,
    },
    async (ctx) => {
      const input = body(ctx, DeleteIngestBody);
      const { tenantId } = principalOf(ctx);
      await produce(ctx, `${tenantId}:${input.clientId}`, (base) => ({
        ...base,
        type: 'DeleteRecord',
        data: { clientId: input.clientId },
      }));
      ctx.status = 202;
      ctx.body = { message: 'Accepted', id: recordIdFor(tenantId, input.clientId) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/ingest/user',
      tag: 'ingest',
      summary: 'Create or update a user only (asynchronous).',
      body: UserBody,
      status: 202,
      response: AcceptedResponse,
    },
    async (ctx) => {
      const input = body(ctx, UserBody);
      const { tenantId } = principalOf(ctx);
      await produce(ctx, `${tenantId}:user:${input.clientId}`, (base) => ({
        ...base,
        type: 'IngestUser',
        data: input,
      }));
      ctx.status = 202;
      ctx.body = { message: 'Accepted', id: userIdFor(tenantId, input.clientId) };
    },
  );
}
