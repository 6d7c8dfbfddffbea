import { DEFAULT_SETTINGS, recordIdFor, type DomainEvent } from '@vigil/proto';
import { UnavailableError } from '../domain/errors';
import type { RecordState } from '../domain/record';
import type { ReportState } from '../domain/report';
import type { Loaded } from '../domain/stream';
import type { EventStore } from '../store/event-store';
import type { TenantConfigCache } from '../store/tenant-config';
import { createReport, type CreateReportInput } from './reports';
import { StreamWriter } from './stream-writer';
import type { UseCases } from './use-cases';

// createReport over an event store and report claims in memory: a failed first request, then its retry.

const TENANT = 'ten_1';
const RECORD_ID = recordIdFor(TENANT, 'post-1');
const DAY_MS = 24 * 60 * 60 * 1000;

/** The stores createReport reaches, in memory; `failures` makes the next calls of a method fail, in turn. */
function memoryStore() {
  const reports = new Map<string, ReportState>();
  const claims = new Map<string, string>();
  const contacts = new Map<string, { email: string; createdAt: Date }>();
  const failures: { method: 'commit' | 'commitLost' | 'saveReportContact'; err: Error }[] = [];
  const takeFailure = (method: string) => {
    const at = failures.findIndex((failure) => failure.method === method);
    return at < 0 ? undefined : failures.splice(at, 1)[0]!.err;
  };
  const record = { _id: RECORD_ID, tenantId: TENANT, clientId: 'post-1', deleted: false } as RecordState;
  const store = {
    streams: {
      loadRecord: () =>
        Promise.resolve({ kind: 'record', stream: `record:${RECORD_ID}`, state: record, tail: [], events: [] }),
      loadReport: (id: string): Promise<Loaded<ReportState>> => {
        const state = reports.get(id) ?? null;
        return Promise.resolve({
          kind: 'report',
          stream: `report:${id}`,
          state,
          tail: [],
          events: [],
          created: !state,
        });
      },
    },
    commitTelling: (stored: (events: DomainEvent[]) => void, ...streams: Loaded<ReportState>[]) => {
      const before = takeFailure('commit');
      if (before) return Promise.reject(before);
      for (const stream of streams)
        if (stream.state && stream.events.length) reports.set(stream.state._id, stream.state);
      // Committed, then its reply is lost.
      const lost = takeFailure('commitLost');
      if (lost) return Promise.reject(lost);
      const events = streams.flatMap((stream) => stream.events);
      if (events.length > 0) stored(events);
      return Promise.resolve(events);
    },
    reportClaims: {
      claimReport: (key: string, _tenantId: string, reportId: string) => {
        const holder = claims.get(key);
        if (holder) return Promise.resolve(holder);
        claims.set(key, reportId);
        return Promise.resolve(null);
      },
      releaseReportClaim: (key: string) => Promise.resolve(void claims.delete(key)),
      saveReportContact: (reportId: string, _t: string, email: string, _days: number, receivedAt: Date) => {
        const failure = takeFailure('saveReportContact');
        if (failure) return Promise.reject(failure);
        if (!contacts.has(reportId)) contacts.set(reportId, { email, createdAt: receivedAt });
        return Promise.resolve();
      },
    },
  };
  const eventStore = store as unknown as EventStore;
  const deps = {
    store: eventStore,
    tenants: { get: () => Promise.resolve({ settings: DEFAULT_SETTINGS }) } as unknown as TenantConfigCache,
    writer: new StreamWriter(eventStore, { appended: () => undefined }, 8),
  } as unknown as UseCases;
  return { deps, reports, contacts, failures };
}

const input = (reporter: Partial<CreateReportInput['reporter']> = {}): CreateReportInput => ({
  tenantId: TENANT,
  correlationId: 'corr_1',
  target: { type: 'record', clientId: 'post-1' },
  reporter: { type: 'user', id: 'reader-1', ...reporter },
  category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
  ground: 'INCOMPATIBLE_CONTENT',
  explanation: 'a fake shop',
  goodFaith: false,
});

const down = () => new UnavailableError('database unavailable');

describe('createReport', () => {
  it('keeps the email of a new report from a reporter who gave one, and none from one who did not', async () => {
    const { deps, contacts } = memoryStore();
    const { report } = await createReport(deps, input({ email: 'reader@example.com' }));
    expect(contacts.get(report._id)).toEqual({ email: 'reader@example.com', createdAt: report.createdAt });
    const other = await createReport(deps, input({ id: 'reader-2' }));
    expect(other.report.reporter.hasEmail).toBe(false);
    expect(contacts.has(other.report._id)).toBe(false);
  });

  it.each<[string, 'commitLost' | 'saveReportContact']>([
    ["the commit's reply is lost", 'commitLost'],
    ['the contact is not stored', 'saveReportContact'],
  ])('keeps the email when %s and the retry finds the report', async (_name, method) => {
    const { deps, contacts, failures, reports } = memoryStore();
    failures.push({ method, err: down() });
    await expect(createReport(deps, input({ email: 'reader@example.com' }))).rejects.toThrow('database unavailable');
    expect(reports.size).toBe(1);
    expect(contacts.size).toBe(0);

    const retry = await createReport(deps, input({ email: 'reader@example.com' }));
    expect(retry.duplicate).toBe(true);
    expect(retry.report.reporter.hasEmail).toBe(true);
    expect(contacts.get(retry.report._id)).toEqual({ email: 'reader@example.com', createdAt: retry.report.createdAt });
  });

  it('keeps the first email on a duplicate, and none when the reporter withheld it the first time', async () => {
    const { deps, contacts } = memoryStore();
    const first = await createReport(deps, input({ email: 'reader@example.com' }));
    await createReport(deps, input({ email: 'other@example.com' }));
    expect(contacts.get(first.report._id)?.email).toBe('reader@example.com');

    const withheld = await createReport(deps, input({ id: 'reader-2' }));
    const again = await createReport(deps, input({ id: 'reader-2', email: 'reader2@example.com' }));
    expect(again.duplicate).toBe(true);
    expect(again.report.reporter.hasEmail).toBe(false);
    expect(contacts.has(withheld.report._id)).toBe(false);
  });

  it('does not store the email again on a duplicate a day or more after the report (it may have been erased)', async () => {
    const { deps, contacts, failures, reports } = memoryStore();
    failures.push({ method: 'saveReportContact', err: down() });
    await expect(createReport(deps, input({ email: 'reader@example.com' }))).rejects.toThrow();
    const [stored] = [...reports.values()];
    stored!.createdAt = new Date(Date.now() - DAY_MS);
    const late = await createReport(deps, input({ email: 'reader@example.com' }));
    expect(late.duplicate).toBe(true);
    expect(contacts.size).toBe(0);
  });
});
