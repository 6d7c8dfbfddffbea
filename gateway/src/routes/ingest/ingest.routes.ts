import type { ApiRouter } from '../../http/api-router';
import { body } from '../../http/validate';
import { deleteRecord } from '../../use-cases/delete-record';
import { ingestRecord } from '../../use-cases/ingest-record';
import { ingestUser } from '../../use-cases/ingest-user';
import { callerOf, type RouteDeps } from '../deps';
import { AcceptedResponse, DeleteIngestBody, IngestAcceptedResponse, IngestBody, UserBody } from './ingest.schema';

/** Ingest answers 202 only once Kafka acknowledged the command: an accepted command is durable. */
export function ingestRoutes(api: ApiRouter, deps: RouteDeps): void {
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
      const accepted = await ingestRecord(deps, callerOf(ctx), body(ctx, IngestBody));
      ctx.status = 202;
      ctx.body = {
        message: 'Accepted',
        id: accepted.recordId,
        moderation: accepted.moderationId,
        ...(accepted.userId ? { user: accepted.userId } : {}),
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
      const id = await deleteRecord(deps, callerOf(ctx), body(ctx, DeleteIngestBody));
      ctx.status = 202;
      ctx.body = { message: 'Accepted', id };
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
      const id = await ingestUser(deps, callerOf(ctx), body(ctx, UserBody));
      ctx.status = 202;
      ctx.body = { message: 'Accepted', id };
    },
  );
}
