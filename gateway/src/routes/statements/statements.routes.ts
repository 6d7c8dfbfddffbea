import { type Statement } from '@vigil/proto';
import { statementsOf } from '../../domain/statements-of';
import { mapInTurns } from '@vigil/proto/platform';
import type { Context } from 'koa';
import type { ApiRouter } from '../../http/api-router';
import { idParam } from '../../http/params';
import { callModerator, principalOf, type RouteDeps } from '../deps';
import { eventsOf } from '../shared/stored-events';
import { StatementList } from './statements.schema';

/** Flagged records of a user whose statements `GET /users/{id}/statements` lists. */
const USER_RECORDS = 50;
/** Record event reads in flight at once for one user's statements. */
const RECORD_READS_AT_ONCE = 8;

/**
 * Statements of reasons, computed on read from the decision events the moderator stores: a record's or user's events
 * are read once (one store query by stream), and no statement is written anywhere, so a moderation costs the store
 * nothing more. Each restricting event carries its policy's grounds as they were when it was decided.
 */
export function statementRoutes(api: ApiRouter, deps: RouteDeps): void {
  async function contextOf(ctx: Context, userId: string | undefined) {
    const tenantId = principalOf(ctx).tenantId;
    const settings = await deps.configStore.cachedSettings(tenantId);
    let appealUrl: string | null = null;
    if (userId) {
      const user = await callModerator(deps, ctx, 'getUser', { userId }).catch(() => null);
      if (user) appealUrl = deps.appealLinks.urlFor(tenantId, user, settings.appealWindowDays * 86_400);
    }
    return { tenantId, context: { appealWindowDays: settings.appealWindowDays, appealUrl } };
  }

  api.route(
    {
      method: 'get',
      path: '/records/:id/statements',
      tag: 'statements',
      summary: "A record's statements of reasons (Art. 17 DSA), oldest first: each flag, and each flag lifted.",
      status: 200,
      response: StatementList,
    },
    async (ctx) => {
      const recordId = idParam(ctx);
      const [record, events] = await Promise.all([
        callModerator(deps, ctx, 'getRecord', { recordId }),
        callModerator(deps, ctx, 'getRecordEvents', { recordId }),
      ]);
      const { tenantId, context } = await contextOf(ctx, record.userId || undefined);
      ctx.body = { data: statementsOf(eventsOf(tenantId, events), context), has_more: false };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/users/:id/statements',
      tag: 'statements',
      summary:
        "A user's statements of reasons, newest first: their suspensions, bans and reinstatements, and those of " +
        `their flagged records (at most ${USER_RECORDS}).`,
      status: 200,
      response: StatementList,
    },
    async (ctx) => {
      const userId = idParam(ctx);
      // Both reads at once, but the user's events decide the answer: for an unknown user (or another tenant's) they
      // are 404 not_found, while the records' user filter is 400, and whichever failed first used to win.
      const recordsRead = callModerator(deps, ctx, 'listRecords', { userId, status: 'Flagged', limit: USER_RECORDS });
      recordsRead.catch(() => undefined);
      const userEvents = await callModerator(deps, ctx, 'getUserEvents', { userId });
      const records = await recordsRead;
      const { tenantId, context } = await contextOf(ctx, userId);
      const statements: Statement[] = statementsOf(eventsOf(tenantId, userEvents), context);
      // A few records' events at a time: one slow read does not hold the others, and one request cannot take every
      // moderator connection.
      const perRecord = await mapInTurns(records.records, RECORD_READS_AT_ONCE, (record) =>
        callModerator(deps, ctx, 'getRecordEvents', { recordId: record.id }),
      );
      for (const events of perRecord) statements.push(...statementsOf(eventsOf(tenantId, events), context));
      statements.sort((a, b) => (a.eventId < b.eventId ? 1 : a.eventId > b.eventId ? -1 : 0));
      ctx.body = { data: statements, has_more: records.hasMore };
    },
  );
}
