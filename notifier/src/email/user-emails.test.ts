import { DEFAULT_SETTINGS, type DomainEvent, type EmailMessageDoc } from '@vigil/proto';
import pino from 'pino';
import type { EmailStore } from '../store/email-store';
import type { SmtpSender } from './smtp-sender';
import { UserEmails } from './user-emails';

const DAY_MS = 86_400_000;

/** An in-memory EmailStore: inserted messages, finished outcomes, and what `claim` hands out. */
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

const suspended = (id: string): DomainEvent => ({
  id,
  tenantId: 'ten_1',
  stream: 'user-usr_1',
  version: 2,
  occurredAt: new Date().toISOString(),
  correlationId: 'c',
  type: 'UserStatusChanged',
  data: {
    userId: 'usr_1',
    actionId: 'act_1',
    status: 'Suspended',
    previousStatus: 'Compliant',
    via: 'Automation',
    testMode: false,
  },
});

const emails = (store: EmailStore, sender?: SmtpSender) =>
  new UserEmails({
    store,
    ...(sender ? { sender } : {}),
    maxDelayMs: DAY_MS,
    log: pino({ level: 'silent' }),
    retryScheduleS: [1],
    pollMs: 60_000,
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

  it('sends a message another replica planned', async () => {
    const { store, finished, firstFinish } = fakeStore([pending(new Date())]);
    const { sender, sent } = fakeSender();
    const worker = emails(store, sender);
    worker.start();
    await firstFinish;
    await worker.stop();
    expect(sent).toEqual(['user@example.com']);
    expect(finished).toEqual([{ id: 'eml_evt_1', next: { state: 'sent' }, attempted: true }]);
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
