import { ulid } from '@vigil/proto';
import type { ApiRouter } from '../../http/api-router';
import { body } from '../../http/validate';
import { requestIdOf } from '../../http/request-id';
import { idParam } from '../../http/params';
import { decide } from '../../use-cases/decide';
import { deciderOf, callModerator, principalOf, type RouteDeps } from '../deps';
import { parseMetadata } from '../shared/paging.schema';
import { listRoute } from '../shared/list-route';
import { toRecordView } from '../shared/presenters';
import {
  ListRecordsQuery,
  ManualModerationBody,
  RecordData,
  RecordEvents,
  RecordList,
  RerunModerationsBody,
  RerunModerationsResponse,
} from './records.schema';

export function recordRoutes(api: ApiRouter, deps: RouteDeps): void {
  listRoute(
    api,
    {
      path: '/records',
      tag: 'records',
      summary: 'List records, oldest first, with cursor pagination and filters.',
      query: ListRecordsQuery,
      response: RecordList,
    },
    async (ctx, q, page) => {
      const result = await callModerator(deps, ctx, 'listRecords', {
        ...page,
        endingBefore: page.startingAfter ? undefined : q.ending_before,
        clientId: q.clientId,
        entity: q.entity,
        status: q.status,
        userId: q.user,
      });
      return { data: result.records.map(toRecordView), hasMore: result.hasMore };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/records/moderations/rerun',
      tag: 'records',
      summary:
        "Re-run moderation on the records matching GET /records' filters, oldest first and at most `limit` " +
        '(asynchronous: one command per record on the ingest topic, results by webhook). Passthrough records have no ' +
        'stored content and are skipped.',
      body: RerunModerationsBody,
      status: 202,
      response: RerunModerationsResponse,
    },
    async (ctx) => {
      const input = body(ctx, RerunModerationsBody);
      const { tenantId } = principalOf(ctx);
      const requestId = requestIdOf(ctx);
      const clientIds: string[] = [];
      let cursor: string | undefined;
      let hasMore = false;
      // Pages of 100 (the list maximum) until `limit` records are taken; the commands go to Kafka together, each
      // keyed by its record so it is ordered after that record's ingests, and 202 only once all were acknowledged.
      for (;;) {
        const page = await deps.moderator.call(
          'listRecords',
          {
            tenantId,
            limit: 100,
            startingAfter: cursor,
            clientId: input.clientId,
            entity: input.entity,
            status: input.status,
            userId: input.user,
          },
          { requestId },
        );
        let taken = 0;
        for (const record of page.records) {
          if (clientIds.length >= input.limit) break;
          taken += 1;
          if (!record.passthrough) clientIds.push(record.clientId);
        }
        hasMore = taken < page.records.length || page.hasMore;
        cursor = page.records[taken - 1]?.id;
        if (!page.hasMore || clientIds.length >= input.limit || !cursor) break;
      }
      // Re-run with the rules as this gateway knows them now (a rule saved just before is the one that judges).
      const configVersion = deps.versions.of(tenantId);
      await Promise.all(
        clientIds.map((clientId) => {
          const id = ulid();
          return deps.commands.send({
            topic: deps.topics.ingest,
            key: `${tenantId}:${clientId}`,
            id,
            type: 'RerunModeration',
            value: {
              id,
              tenantId,
              issuedAt: new Date().toISOString(),
              correlationId: requestId,
              ...(configVersion > 0 ? { configVersion } : {}),
              type: 'RerunModeration',
              data: { clientId, moderationId: `mod_${ulid()}` },
            },
          });
        }),
      );
      ctx.status = 202;
      ctx.body = { message: 'Accepted', count: clientIds.length, has_more: hasMore };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/records/:id',
      tag: 'records',
      summary: 'Get a record.',
      status: 200,
      response: RecordData,
    },
    async (ctx) => {
      const record = await callModerator(deps, ctx, 'getRecord', { recordId: idParam(ctx) });
      ctx.body = { data: toRecordView(record) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/records/:id/events',
      tag: 'records',
      summary: "A record's history: its stored events, oldest first (404 once the record is deleted, as the record).",
      status: 200,
      response: RecordEvents,
    },
    async (ctx) => {
      const result = await callModerator(deps, ctx, 'getRecordEvents', { recordId: idParam(ctx) });
      ctx.body = {
        data: result.events.map((event) => ({
          id: event.id,
          type: event.type,
          version: event.version,
          occurredAt: event.occurredAt,
          data: parseMetadata(event.dataJson),
        })),
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/records/:id/moderations',
      tag: 'records',
      summary: 'Moderate a record by hand (sticky: automation will not override it).',
      body: ManualModerationBody,
      status: 200,
      response: RecordData,
    },
    async (ctx) => {
      const input = body(ctx, ManualModerationBody);
      const record = await decide(deps, deciderOf(ctx), 'moderateRecordManually', idParam(ctx), {
        status: input.status,
        reason: input.reason,
        policy: input.policy ?? '',
      });
      ctx.body = { data: toRecordView(record) };
    },
  );
}
