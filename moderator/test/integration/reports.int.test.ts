import { COLLECTIONS, type DomainEvent } from '@vigil/proto';
import { reportStream } from '../../src/domain/stream-names';
import type { CreateReportResponse__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/CreateReportResponse';
import type { ListReportsResponse__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/ListReportsResponse';
import type { ModerateResponse__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/ModerateResponse';
import type { Record__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/Record';
import type { Report__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/Report';
import type { User__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/User';
import type { ServiceError } from '@grpc/grpc-js';
import { rebuildProjections } from '../../src/store/rebuild-projections';
import { content, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** A stored, compliant record of a user, for reports to point at. */
async function post(tenantId: string, clientId: string, user = 'author-1'): Promise<ModerateResponse__Output> {
  return h.call('Moderate', {
    tenantId,
    clientId,
    name: 'A post',
    entity: 'post',
    content: content('a lovely day'),
    user: { clientId: user },
  });
}

const report = (tenantId: string, extra: Record<string, unknown> = {}) =>
  h.call<Record<string, unknown>, CreateReportResponse__Output>('CreateReport', {
    tenantId,
    targetType: 'record',
    targetClientId: 'post-1',
    reporterType: 'user',
    reporterId: 'reader-1',
    category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
    ground: 'INCOMPATIBLE_CONTENT',
    explanation: 'a fake shop',
    ...extra,
  });

const codeOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
    return 'ok';
  } catch (err) {
    return (err as ServiceError).code;
  }
};

describe('reports', () => {
  it('receives a report as its own stream, and counts it open on the record', async () => {
    const tenantId = await h.newTenant();
    const { recordId } = await post(tenantId, 'post-1');
    const { report: created, duplicate } = await report(tenantId, { reporterEmail: 'reader@example.com' });
    expect(duplicate).toBe(false);
    expect(created).toMatchObject({
      status: 'Open',
      target: { type: 'record', id: recordId, clientId: 'post-1' },
      reporter: { type: 'user', id: 'reader-1', hasEmail: true, email: 'reader@example.com' },
      targetOpenReports: 1,
    });
    const events = await h.db
      .collection<DomainEvent>(COLLECTIONS.events)
      .find({ stream: reportStream(created!.id) })
      .toArray();
    expect(events.map((event) => event.type)).toEqual(['ReportReceived']);
    // The email is kept apart from the event, which Kafka carries and nothing can erase.
    expect(JSON.stringify(events)).not.toContain('reader@example.com');
    const record = await h.call<unknown, Record__Output>('GetRecord', { tenantId, recordId });
    expect(record.openReportsCount).toBe(1);
  });

  it('answers a second open report of the same reporter on the same target with the first, even when they race', async () => {
    const tenantId = await h.newTenant();
    await post(tenantId, 'post-1');
    const answers = await Promise.all(Array.from({ length: 6 }, () => report(tenantId)));
    const ids = new Set(answers.map((answer) => answer.report!.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((answer) => !answer.duplicate)).toHaveLength(1);
    const other = await report(tenantId, { reporterId: 'reader-2' });
    expect(ids.has(other.report!.id)).toBe(false);
    const open = await h.call<unknown, ListReportsResponse__Output>('ListReports', { tenantId, status: 'Open' });
    expect(open.reports).toHaveLength(2);
    expect(open.reports.every((item) => item.targetOpenReports === 2)).toBe(true);
  });

  it('decides a report by flagging the record as a manual decision, then takes a new report from the reporter', async () => {
    const tenantId = await h.newTenant();
    const { recordId } = await post(tenantId, 'post-1');
    const { report: first } = await report(tenantId);
    const decided = await h.call<unknown, Report__Output>('DecideReport', {
      tenantId,
      reportId: first!.id,
      outcome: 'Actioned',
      action: 'Flag',
      reason: 'a scam',
      actor: 'api_key:k1',
    });
    expect(decided).toMatchObject({ status: 'Decided', decision: { outcome: 'Actioned', action: 'Flag' } });
    const record = await h.call<unknown, Record__Output>('GetRecord', { tenantId, recordId });
    expect(record).toMatchObject({ status: 'Flagged', statusUpdatedVia: 'Manual', openReportsCount: 0 });
    const moderated = await h.db
      .collection<DomainEvent>(COLLECTIONS.events)
      .findOne({ stream: `record-${recordId}`, type: 'RecordModerated', 'data.via': 'Manual' });
    expect(moderated?.data).toMatchObject({ moderationId: decided.decision!.decisionId, reasons: ['a scam'] });
    // The same decision again changes nothing; another one is refused.
    const again = { tenantId, reportId: first!.id, outcome: 'Actioned', action: 'Flag', reason: 'x', actor: 'a' };
    expect(await codeOf(h.call('DecideReport', again))).toBe('ok');
    expect(await codeOf(h.call('DecideReport', { ...again, outcome: 'NoAction', action: undefined }))).toBe(10);
    const second = await report(tenantId);
    expect(second.duplicate).toBe(false);
    expect(second.report!.id).not.toBe(first!.id);
  });

  it('suspends a reported user, and records no action with its reason', async () => {
    const tenantId = await h.newTenant();
    const { userId } = await post(tenantId, 'post-1', 'author-9');
    const onUser = await report(tenantId, { targetType: 'user', targetClientId: 'author-9' });
    expect((await h.call<unknown, User__Output>('GetUser', { tenantId, userId })).openReportsCount).toBe(1);
    await h.call('DecideReport', {
      tenantId,
      reportId: onUser.report!.id,
      outcome: 'Actioned',
      action: 'Suspend',
      reason: 'harassment',
      actor: 'a',
    });
    expect(await h.call<unknown, User__Output>('GetUser', { tenantId, userId })).toMatchObject({
      status: 'Suspended',
      statusUpdatedVia: 'Manual',
      openReportsCount: 0,
    });
    const onRecord = await report(tenantId);
    const none = await h.call<unknown, Report__Output>('DecideReport', {
      tenantId,
      reportId: onRecord.report!.id,
      outcome: 'NoAction',
      reason: 'satire',
      actor: 'a',
    });
    expect(none.decision).toMatchObject({ outcome: 'NoAction', reason: 'satire' });
  });

  it('takes a trusted flagger only when the tenant lists it, with its name', async () => {
    const tenantId = await h.newTenant();
    await h.db
      .collection<{ _id: string; trustedFlaggers: unknown }>(COLLECTIONS.settings)
      .insertOne({ _id: tenantId, trustedFlaggers: [{ id: 'hotline', name: 'The Hotline' }] });
    await post(tenantId, 'post-1');
    const trusted = await report(tenantId, { reporterType: 'trusted_flagger', reporterId: 'hotline' });
    expect(trusted.report!.reporter).toMatchObject({ type: 'trusted_flagger', name: 'The Hotline' });
    expect(await codeOf(report(tenantId, { reporterType: 'trusted_flagger', reporterId: 'stranger' }))).toBe(3);
    const listed = await h.call<unknown, ListReportsResponse__Output>('ListReports', { tenantId, trusted: true });
    expect(listed.reports.map((item) => item.id)).toEqual([trusted.report!.id]);
  });

  it('refuses a report on a record or user the tenant does not have, and another tenant reads none', async () => {
    const tenantId = await h.newTenant();
    const other = await h.newTenant();
    await post(tenantId, 'post-1');
    expect(await codeOf(report(tenantId, { targetClientId: 'nope' }))).toBe(5);
    expect(await codeOf(report(other))).toBe(5);
    const { report: created } = await report(tenantId);
    expect(await codeOf(h.call('GetReport', { tenantId: other, reportId: created!.id }))).toBe(5);
    expect(
      await codeOf(
        h.call('DecideReport', {
          tenantId: other,
          reportId: created!.id,
          outcome: 'NoAction',
          reason: 'r',
          actor: 'a',
        }),
      ),
    ).toBe(5);
  });

  it('rebuilds the reports and the claims of open reports equal to the originals', async () => {
    const snapshot = async () =>
      Object.fromEntries(
        await Promise.all(
          [COLLECTIONS.reports, COLLECTIONS.reportClaims].map(async (name) => [
            name,
            (await h.db.collection(name).find({}).sort({ _id: 1 }).toArray()).map((doc) => {
              // A claim's creation time is when it was claimed, not part of what the events say.
              const { createdAt, ...rest } = doc;
              return name === COLLECTIONS.reportClaims ? rest : { createdAt, ...rest };
            }),
          ]),
        ),
      );
    const before = await snapshot();
    expect(before[COLLECTIONS.reports].length).toBeGreaterThan(0);
    const rebuilt = await rebuildProjections(h.moderator.store);
    expect(rebuilt.reports).toBe(before[COLLECTIONS.reports].length);
    expect(await snapshot()).toEqual(before);
  });
});
