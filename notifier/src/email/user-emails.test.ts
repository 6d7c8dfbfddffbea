import { DEFAULT_SETTINGS, type DomainEvent, type EmailMessageDoc } from '@vigil/proto';
import pino from 'pino';
import type { EmailStore } from '../store/email-store';
import type { TenantSettingsReads } from '../store/tenant-settings';
import type { SmtpSender } from './smtp-sender';
import { reportDecided, userStatusChanged } from '../../../deploy/test-support/events';
import { UserEmails } from './user-emails';

const DAY_MS = 86_400_000;

/** An in-memory EmailStore (and the tenant's settings): inserted messages, finished outcomes, and what `claim` hands out. */
function fakeStore(claimable: EmailMessageDoc[] = []) {
  const inserted = new Map<string, EmailMessageDoc>();
  const finished: Array<{ id: string; next: unknown; attempted: boolean }> = [];
  let resolveFinished!: () => void;
  const firstFinish = new Promise<void>((resolve) => (resolveFinished = resolve));
  const store = {
    settingsOf: () =>
      Promise.resolve({ ...DEFAULT_SETTINGS, emails: { ...DEFAULT_SETTINGS.emails, enabled: true, templates: {} } }),
    insertNew: (doc: EmailMessageDoc) => {
      if (inserted.has(doc._id)) return Promise.resolve(false);
      inserted.set(doc._id, doc);
      return Promise.resolve(true);
    },
    claim: () => Promise.resolve(claimable.splice(0)),
    finish: (doc: EmailMessageDoc, attempt: unknown, next: unknown) => {
      finished.push({ id: doc._id, next, attempted: attempt !== undefined });
      resolveFinished();
      return Promise.resolve();
    },
    userOf: () => Promise.resolve({ email: 'user@example.com', username: 'ann' }),
    reporterEmailOf: (reportId: string) => Promise.resolve(reportId === 'rpt_kept' ? 'reader@example.com' : null),
    tenantNameOf: () => Promise.resolve('Acme'),
    pruneLeases: () => Promise.resolve(0),
  };
  return { store: store as unknown as EmailStore, inserted, finished, firstFinish };
}

function fakeSender() {
  const sent: string[] = [];
  const sender = {
    send: (to: string) => {
      sent.push(to);
      return Promise.resolve({ ok: true, retriable: false, durationMs: 1 });
    },
    close: () => undefined,
  };
  return { sender: sender as unknown as SmtpSender, sent };
}

const suspended = (id: string): DomainEvent =>
  userStatusChanged({ via: 'Automation' }, { id, tenantId: 'ten_1', occurredAt: new Date().toISOString() });

const emails = (store: EmailStore, sender?: SmtpSender) =>
  new UserEmails({
    store,
    settings: store as unknown as TenantSettingsReads,
    ...(sender ? { sender } : {}),
    maxDelayMs: DAY_MS,
    log: pino({ level: 'silent' }),
    retryScheduleS: [1],
    pollMs: 60_000,
    sendMs: 4_000,
    leaseMs: 10_000,
    concurrency: 1,
  });

describe('UserEmails.plan', () => {
  it.each([
    ['with an SMTP relay', true],
    ['without one', false],
  ])('plans a status change email as pending on a replica %s', async (_name, withSmtp) => {
    const { store, inserted } = fakeStore();
    await emails(store, withSmtp ? fakeSender().sender : undefined).plan([suspended('evt_1')]);
    expect([...inserted.values()]).toEqual([
      expect.objectContaining({ _id: 'eml_evt_1', kind: 'Suspended', state: 'pending', attemptCount: 0 }),
    ]);
    expect(inserted.get('eml_evt_1')).not.toHaveProperty('skipReason');
  });
});

describe('UserEmails sending', () => {
  const pending = (createdAt: Date): EmailMessageDoc => ({
    _id: 'eml_evt_1',
    tenantId: 'ten_1',
    userId: 'usr_1',
    eventId: 'evt_1',
    kind: 'Suspended',
    state: 'sending',
    attemptCount: 0,
    attempts: [],
    dueAt: createdAt,
    createdAt,
    updatedAt: createdAt,
  });

  it.each([
    ['another replica planned', undefined],
    ["whose lease has a send's time left", 9_000],
  ])('sends a message %s', async (_name, leaseLeftMs) => {
    const now = Date.now();
    const doc = pending(new Date(now));
    const leased = leaseLeftMs === undefined ? doc : { ...doc, leaseUntil: new Date(now + leaseLeftMs) };
    const { store, finished, firstFinish } = fakeStore([leased]);
    const { sender, sent } = fakeSender();
    const worker = emails(store, sender);
    worker.start();
    await firstFinish;
    await worker.stop();
    expect(sent).toEqual(['user@example.com']);
    expect(finished).toEqual([{ id: 'eml_evt_1', next: { state: 'sent' }, attempted: true }]);
  });

  it('leaves a message whose lease has less left than a send takes to be taken over, unsent', async () => {
    const now = Date.now();
    const short = { ...pending(new Date(now)), leaseUntil: new Date(now + 3_000) };
    const { store, finished } = fakeStore([short]);
    let read!: () => void;
    const reads = new Promise<void>((resolve) => (read = resolve));
    const userOf = store.userOf.bind(store);
    store.userOf = (...args) => userOf(...args).finally(read);
    const { sender, sent } = fakeSender();
    const worker = emails(store, sender);
    worker.start();
    await reads;
    await worker.stop();
    expect(sent).toEqual([]);
    // No outcome written: the lease runs out and the job is taken over, as after a crash.
    expect(finished).toEqual([]);
  });

  it('records as expired, unsent, a message no replica with SMTP attempted within the bound', async () => {
    const { store, finished, firstFinish } = fakeStore([pending(new Date(Date.now() - DAY_MS - 60_000))]);
    const { sender, sent } = fakeSender();
    const worker = emails(store, sender);
    worker.start();
    await firstFinish;
    await worker.stop();
    expect(sent).toEqual([]);
    expect(finished).toEqual([{ id: 'eml_evt_1', next: { state: 'skipped', reason: 'expired' }, attempted: false }]);
  });
});

describe("a reporter's outcome emails", () => {
  const decided = (data: Record<string, unknown>): DomainEvent =>
    reportDecided(data, { id: 'evt_r', tenantId: 'ten_1' });

  it('plans a decision not to act with the complaint window, and no address', async () => {
    const { store, inserted } = fakeStore();
    await emails(store).plan([decided({})]);
    const doc = inserted.get('eml_evt_r');
    expect(doc).toMatchObject({ kind: 'ReportDecided', reportId: 'rpt_1', userId: '', state: 'pending' });
    expect(doc?.complaintOpenUntil?.toISOString()).toBe('2026-08-31T10:00:00.000Z');
    expect(doc?.outcome).toContain('Decision: no action was taken.');
    expect(JSON.stringify(doc)).not.toContain('@');
  });

  it.each<[string, Record<string, unknown>]>([
    ['a reporter who gave no address', { reporter: { type: 'user', id: 'reader-1', hasEmail: false } }],
    ['a trusted flagger', { reporter: { type: 'trusted_flagger', id: 'hotline' } }],
    ['an event of an earlier release, without hasEmail', { reporter: { type: 'user', id: 'reader-1' } }],
  ])('plans nothing for %s', async (_name, data) => {
    const { store, inserted } = fakeStore();
    await emails(store).plan([decided(data)]);
    expect(inserted.size).toBe(0);
  });

  it('sends to the address kept for the report, and skips one no longer kept', async () => {
    const doc = (reportId: string): EmailMessageDoc => ({
      _id: `eml_${reportId}`,
      tenantId: 'ten_1',
      userId: '',
      reportId,
      eventId: 'evt_r',
      kind: 'ReportDecided',
      outcome: ['Decision: no action was taken.'],
      state: 'sending',
      attemptCount: 0,
      attempts: [],
      dueAt: new Date(),
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    const { store, finished } = fakeStore([doc('rpt_kept'), doc('rpt_erased')]);
    const { sender, sent } = fakeSender();
    const worker = emails(store, sender);
    worker.start();
    await waitUntil(() => finished.length === 2);
    await worker.stop();
    expect(sent).toEqual(['reader@example.com']);
    expect(finished).toEqual(
      expect.arrayContaining([
        { id: 'eml_rpt_kept', next: { state: 'sent' }, attempted: true },
        { id: 'eml_rpt_erased', next: { state: 'skipped', reason: 'no_email' }, attempted: false },
      ]),
    );
  });
});

/** Resolves once `done` holds, checking on each turn of the event loop, within 5 s. */
async function waitUntil(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
