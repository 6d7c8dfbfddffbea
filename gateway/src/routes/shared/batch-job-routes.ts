import type { z } from 'zod';
import type { ApiRouter } from '../../http/api-router';
import { idParam } from '../../http/params';
import { batchJobOf, cancelBatchJob, type BatchJobKindName, type BatchJobStateOf } from '../../use-cases/batch-jobs';
import { principalOf, type RouteDeps } from '../deps';

/** What one kind of batch job's read and cancel routes say and show. */
export interface BatchJobRoutesSpec<K extends BatchJobKindName> {
  kind: K;
  tag: string;
  summaries: { list: string; get: string; cancel: string };
  /** One job's body, and a list's. */
  data: z.ZodType;
  list: z.ZodType;
  view: (state: BatchJobStateOf<K>) => unknown;
  /** A job as listed: the view without what only the job's own read shows. */
  listView: (state: BatchJobStateOf<K>) => unknown;
}

/** The list, read and cancel routes of one kind of batch job (`/<kind>`, `/<kind>/:id`, `/<kind>/:id/cancel`). */
export function batchJobRoutes<K extends BatchJobKindName>(
  api: ApiRouter,
  deps: RouteDeps,
  spec: BatchJobRoutesSpec<K>,
): void {
  const { kind, tag, summaries } = spec;
  api.route(
    { method: 'get', path: `/${kind}`, tag, summary: summaries.list, status: 200, response: spec.list },
    async (ctx) => {
      const states = (await deps[kind].list(principalOf(ctx).tenantId)) as Array<BatchJobStateOf<K>>;
      ctx.body = { data: states.map((state) => spec.listView(state)), has_more: false };
    },
  );

  api.route(
    { method: 'get', path: `/${kind}/:id`, tag, summary: summaries.get, status: 200, response: spec.data },
    async (ctx) => {
      ctx.body = { data: spec.view(await batchJobOf(deps, kind, principalOf(ctx).tenantId, idParam(ctx))) };
    },
  );

  api.route(
    { method: 'post', path: `/${kind}/:id/cancel`, tag, summary: summaries.cancel, status: 202, response: spec.data },
    async (ctx) => {
      const state = await cancelBatchJob(deps, kind, principalOf(ctx).tenantId, idParam(ctx));
      ctx.status = 202;
      ctx.body = { data: spec.view(state) };
    },
  );
}
