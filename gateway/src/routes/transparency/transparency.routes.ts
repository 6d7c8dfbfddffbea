import { TdbSettings } from '@vigil/proto';
import { ValidationError } from '../../errors';
import type { ApiRouter } from '../../http/api-router';
import { body, query } from '../../http/validate';
import type { TdbSettingsView as StoredView, TdbSubmissionRecord } from '../../store/tdb-store';
import { principalOf, type RouteDeps } from '../deps';
import { TdbSettingsBody, TdbSettingsView, TdbSubmissionList, TdbSubmissionQuery } from './transparency.schema';

function toSettingsView(view: StoredView) {
  return view.enabled ? { ...view, updatedAt: view.updatedAt.toISOString() } : view;
}

function toSubmissionView(doc: TdbSubmissionRecord) {
  return {
    id: doc._id,
    statementId: doc.statementId,
    eventId: doc.eventId,
    subject: doc.subject,
    status: doc.state,
    skipReason: doc.skipReason ?? null,
    tdbUuid: doc.tdbUuid ?? null,
    alreadyStored: doc.alreadyStored ?? false,
    rejection: doc.rejection ?? null,
    statement: doc.payload as unknown as Record<string, unknown>,
    attemptCount: doc.attemptCount,
    attempts: doc.attempts.map((attempt) => ({
      at: attempt.at.toISOString(),
      durationMs: attempt.durationMs,
      batchSize: attempt.batchSize,
      statusCode: attempt.statusCode ?? null,
      error: attempt.error ?? null,
    })),
    createdAt: doc.createdAt.toISOString(),
    submittedAt: doc.submittedAt?.toISOString() ?? null,
  };
}

/**
 * Submission of statements of reasons to the Commission's Transparency Database (Art. 24(5) DSA): the tenant's
 * settings (the token sealed like the Stripe key, never shown again) and the log of what the notifier sent.
 */
export function transparencyRoutes(api: ApiRouter, deps: RouteDeps): void {
  api.route(
    {
      method: 'get',
      path: '/settings/transparency-database',
      tag: 'settings',
      summary: 'Whether statements of reasons are submitted to the Transparency Database, and how.',
      status: 200,
      response: TdbSettingsView,
    },
    async (ctx) => {
      ctx.body = toSettingsView(await deps.tdb.view(principalOf(ctx).tenantId));
    },
  );

  api.route(
    {
      method: 'put',
      path: '/settings/transparency-database',
      tag: 'settings',
      summary:
        'Submit every statement of reasons to the Transparency Database from now on, or change how (the token is ' +
        'stored encrypted). 400 validation_error on baseUrl for an address webhooks refuse, or for plain http.',
      body: TdbSettingsBody,
      status: 200,
      response: TdbSettingsView,
    },
    async (ctx) => {
      const { token, ...rest } = body(ctx, TdbSettingsBody);
      const parsed = TdbSettings.safeParse(rest);
      if (!parsed.success) {
        throw new ValidationError(
          'invalid settings',
          parsed.error.issues.map((issue) => ({ path: issue.path as Array<string | number>, message: issue.message })),
        );
      }
      // The token travels to this address: webhooks' address rules, and TLS unless the operator opened the address.
      await deps.endpointUrls.check(parsed.data.baseUrl, {
        field: 'baseUrl',
        name: 'transparency database address',
        httpsOnly: true,
      });
      ctx.body = toSettingsView(await deps.tdb.set(principalOf(ctx).tenantId, parsed.data, token));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/settings/transparency-database',
      tag: 'settings',
      summary: 'Stop submitting; the stored token is deleted. Statements not yet sent are recorded as skipped.',
      status: 200,
      response: TdbSettingsView,
    },
    async (ctx) => {
      await deps.tdb.clear(principalOf(ctx).tenantId);
      ctx.body = { enabled: false, token: null };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/transparency-database/submissions',
      tag: 'settings',
      summary:
        'Statements of reasons sent (or being sent) to the Transparency Database, newest first, with every call ' +
        'that carried them.',
      query: TdbSubmissionQuery,
      status: 200,
      response: TdbSubmissionList,
    },
    async (ctx) => {
      const q = query(ctx, TdbSubmissionQuery);
      const page = await deps.tdb.list(principalOf(ctx).tenantId, q.limit, {
        ...(q.starting_after ? { startingAfter: q.starting_after } : {}),
        ...(q.subject ? { subjectId: q.subject } : {}),
      });
      if (!page) {
        throw new ValidationError('invalid cursor', [
          { path: ['starting_after'], message: 'not a submission of this tenant' },
        ]);
      }
      ctx.body = { data: page.docs.map(toSubmissionView), has_more: page.hasMore };
    },
  );
}
