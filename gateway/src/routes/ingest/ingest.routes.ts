import { type Command, inRollout, recordIdFor, ulid, userIdFor } from '@vigil/proto';
import type { Context } from 'koa';
import type { ApiRouter } from '../../http/api-router';
import { body } from '../../http/validate';
import { requestIdOf } from '../../http/request-id';
import { principalOf, type RouteDeps } from '../deps';
import { AcceptedResponse, DeleteIngestBody, IngestAcceptedResponse, IngestBody, UserBody } from './ingest.schema';

/**
 * Ingest answers 202 only once Kafka acknowledged the command: an accepted command is durable. Commands about one
 * record share a key, so they reach the moderator in order (users: `tenant:user:clientId`). Keys stay short because
 * `clientId` is bounded (LIMITS.clientId): kafkajs hashes a key in time that grows with the square of its length.
 */
export function ingestRoutes(api: ApiRouter, deps: RouteDeps): void {
  const produce = (ctx: Context, key: string, make: (base: Omit<Command, 'type' | 'data'>) => Command) => {
    const { tenantId } = principalOf(ctx);
    // The configuration version known when the request was accepted: the moderator judges it with rules at least
    // that new, and stamps it on the events the notifier fans out.
    const configVersion = deps.versions.of(tenantId);
    const command = make({
      id: ulid(),
      tenantId,
      issuedAt: new Date().toISOString(),
      correlationId: requestIdOf(ctx),
      ...(configVersion > 0 ? { configVersion } : {}),
    });
    return deps.commands.send({ topic: deps.topics.ingest, key, id: command.id, type: command.type, value: command });
  };

  api.route(
    {
      method: 'post',
      path: '/ingest',
      tag: 'ingest',
      summary:
        'Create or update a record for asynchronous moderation; the result arrives by webhook. `moderation` is null ' +
        "when the tenant's roll-out percentage skipped the record.",
      body: IngestBody,
      status: 202,
      response: IngestAcceptedResponse,
    },
    async (ctx) => {
      const input = body(ctx, IngestBody);
      const { tenantId } = principalOf(ctx);
      const { rolloutPercentage } = await deps.configStore.cachedSettings(tenantId);
      // Decided here, so the answer can name the moderation as Iffy's does, and carried in the command, so every
      // re-delivery agrees; the moderator still moderates a skipped record that is Flagged or whose user is Suspended.
      const moderationId = inRollout(tenantId, input.clientId, rolloutPercentage) ? `mod_${ulid()}` : null;
      await produce(ctx, `${tenantId}:${input.clientId}`, (base) => ({
        ...base,
        type: 'IngestRecord',
        data: input,
        moderationId,
      }));
      ctx.status = 202;
      ctx.body = {
        message: 'Accepted',
        id: recordIdFor(tenantId, input.clientId),
        moderation: moderationId,
        ...(input.user ? { user: userIdFor(tenantId, input.user.clientId) } : {}),
      };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/ingest',
      tag: 'ingest',
      summary:
        'Delete a record by its clientId (asynchronous). 404 not_found when no live record has that clientId: ' +
        'never ingested, its ingest not applied yet, or already deleted.',
      body: DeleteIngestBody,
      status: 202,
      response: AcceptedResponse,
    },
    async (ctx) => {
      const input = body(ctx, DeleteIngestBody);
      const { tenantId } = principalOf(ctx);
      // The delete itself stays a Kafka command (ordered after the record's ingests, applied once), but whether the
      // record exists is asked first, as Iffy answers 404 for an unknown clientId. GetRecord hides deleted records, so
      // a second DELETE answers 404 (Iffy answered 200 again and decremented the user's count twice). Between the
      // check and the command the record may be deleted by another request: the moderator then applies a no-op.
      await deps.moderator.call(
        'getRecord',
        { tenantId, recordId: recordIdFor(tenantId, input.clientId) },
        { requestId: requestIdOf(ctx) },
      );
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
