import type { UserStatus } from '@vigil/proto';
import { ConflictError, FailedPreconditionError, NotFoundError, ProtectedError } from './errors';
import type { PendingEvent } from './events';
import { runStream } from './test-kit';
import { decideUser, evolveUser, type UserCommand } from './user';

const create = (extra: { protected?: boolean; email?: string } = {}, passthrough = false): UserCommand => ({
  type: 'UpsertUser',
  userId: 'usr_1',
  input: { clientId: 'u1', name: 'Ann', ...extra },
  passthrough,
});
const reconcile = (flaggedCount: number, threshold = 1): UserCommand => ({
  type: 'ReconcileUser',
  actionId: 'act_r',
  flaggedCount,
  threshold,
  viaRecordId: 'rec_1',
});
const set = (status: UserStatus): UserCommand => ({
  type: 'SetUserStatus',
  actionId: 'act_m',
  status,
  reason: 'r',
  actor: 'alice',
});
const appeal = (appealId = 'apl_1'): UserCommand => ({ type: 'CreateAppeal', appealId, text: 'please' });
const decide = (decision: 'Approved' | 'Rejected', appealId = 'apl_1'): UserCommand => ({
  type: 'DecideAppeal',
  appealId,
  decision,
  reason: '',
  actor: 'bob',
  actionId: 'act_a',
});

const run = (commands: UserCommand[]) => runStream('user-usr_1', decideUser, evolveUser, commands);

const summary = (events: PendingEvent[]) =>
  events.map((event) =>
    event.type === 'UserStatusChanged'
      ? `${event.data.status} via ${event.data.via}`
      : event.type === 'AppealDecided'
        ? `appeal ${event.data.status}`
        : event.type,
  );

describe('user stream', () => {
  it.each<[string, UserCommand[], string[], UserStatus | undefined]>([
    ['suspends at the threshold', [create(), reconcile(1)], ['Suspended via Automation Flagged Record'], 'Suspended'],
    ['does not suspend below the threshold', [create(), reconcile(2, 3)], [], undefined],
    [
      'reinstates below the threshold',
      [create(), reconcile(1), reconcile(0)],
      ['Compliant via Automation All Compliant'],
      'Compliant',
    ],
    ['is a no-op when already suspended', [create(), reconcile(1), reconcile(2)], [], 'Suspended'],
    ['never suspends a protected user', [create({ protected: true }), reconcile(5)], [], undefined],
    ['never overrides a manual Compliant', [create(), set('Compliant'), reconcile(3)], [], 'Compliant'],
    ['never lifts a manual suspension', [create(), set('Suspended'), reconcile(0)], [], 'Suspended'],
    ['never lifts a ban', [create(), set('Banned'), reconcile(0)], [], 'Banned'],
    ['bans by hand', [create(), reconcile(1), set('Banned')], ['Banned via Manual'], 'Banned'],
    ['is a no-op for the same manual status', [create(), set('Suspended'), set('Suspended')], [], 'Suspended'],
    [
      'records a confirmation by hand of the status automation gave',
      [create(), reconcile(1), set('Suspended')],
      ['Suspended via Manual'],
      'Suspended',
    ],
    [
      'keeps a suspension confirmed by hand against automation',
      [create(), reconcile(1), set('Suspended'), reconcile(0)],
      [],
      'Suspended',
    ],
    [
      'keeps a reinstatement confirmed by hand against automation',
      [create(), reconcile(1), reconcile(0), set('Compliant'), reconcile(3)],
      [],
      'Compliant',
    ],
    [
      'approving an appeal reinstates',
      [create(), reconcile(1), appeal(), decide('Approved')],
      ['appeal Approved', 'Compliant via Automation Appeal Approved'],
      'Compliant',
    ],
    [
      'rejecting an appeal keeps the suspension',
      [create(), reconcile(1), appeal(), decide('Rejected')],
      ['appeal Rejected'],
      'Suspended',
    ],
    [
      'reinstating approves open appeals',
      [create(), reconcile(1), appeal(), reconcile(0)],
      ['Compliant via Automation All Compliant', 'appeal Approved'],
      'Compliant',
    ],
    [
      'a ban rejects open appeals',
      [create(), reconcile(1), appeal(), set('Banned')],
      ['Banned via Manual', 'appeal Rejected'],
      'Banned',
    ],
    [
      'an approved appeal is sticky against automation',
      [create(), reconcile(1), appeal(), decide('Approved'), reconcile(4)],
      [],
      'Compliant',
    ],
  ])('%s', (_name, commands, expected, status) => {
    const { state, last } = run(commands);
    expect(summary(last)).toEqual(expected);
    expect(state?.status).toBe(status);
  });

  it.each<[string, UserCommand[], new (...args: never[]) => Error]>([
    ['suspending a protected user by hand', [create({ protected: true }), set('Suspended')], ProtectedError],
    ['banning a protected user', [create({ protected: true }), set('Banned')], ProtectedError],
    ['an appeal of a compliant user', [create(), appeal()], FailedPreconditionError],
    ['a second open appeal', [create(), reconcile(1), appeal('apl_1'), appeal('apl_2')], ConflictError],
    [
      'a second appeal of a decision whose appeal was rejected',
      [create(), reconcile(1), appeal('apl_1'), decide('Rejected', 'apl_1'), appeal('apl_2')],
      ConflictError,
    ],
    [
      'a second appeal of a decision whose appeal was rejected, after a profile update',
      [
        create(),
        reconcile(1),
        appeal('apl_1'),
        decide('Rejected', 'apl_1'),
        create({ email: 'ann@example.com' }),
        appeal('apl_2'),
      ],
      ConflictError,
    ],
    [
      'an appeal of a user reinstated by hand',
      [create(), set('Banned'), set('Compliant'), appeal()],
      FailedPreconditionError,
    ],
    ['deciding an unknown appeal', [create(), reconcile(1), decide('Approved', 'apl_x')], NotFoundError],
    [
      'reversing a decided appeal',
      [create(), reconcile(1), appeal(), decide('Rejected'), decide('Approved')],
      ConflictError,
    ],
    ['setting the status of an unknown user', [set('Suspended')], NotFoundError],
  ])('rejects %s', (_name, commands, error) => {
    expect(() => run(commands)).toThrow(error);
  });

  it('takes a new appeal once the status changed again after a rejected one', () => {
    const { last } = run([
      create(),
      reconcile(1),
      appeal('apl_1'),
      decide('Rejected', 'apl_1'),
      set('Banned'),
      appeal('apl_2'),
    ]);
    expect(summary(last)).toEqual(['AppealCreated']);
  });

  it('applies protected on creation only and skips unchanged upserts', () => {
    const { state, last } = run([create({ protected: true }), create({ protected: false })]);
    expect(state?.protected).toBe(true);
    expect(last).toEqual([]);
  });

  it('does not keep email or name sent in passthrough mode', () => {
    const { state, last } = run([create({ email: 'a@example.com' }, true)]);
    expect(JSON.stringify(last)).not.toContain('a@example.com');
    expect(JSON.stringify(last)).not.toContain('Ann');
    expect(state?.email).toBeUndefined();
    expect(state?.name).toBeUndefined();
  });
});

describe("a status change's statement basis", () => {
  const statusData = (events: PendingEvent[]) => (events[0]?.type === 'UserStatusChanged' ? events[0].data : undefined);

  it('marks a person upholding an automatic suspension as a confirmation', () => {
    expect(statusData(run([create(), reconcile(1), set('Suspended')]).last)?.confirmsAutomated).toBe(true);
    expect(statusData(run([create(), set('Suspended')]).last)?.confirmsAutomated).toBeUndefined();
  });

  it('says a suspension pauses the payouts of a user with a payments account', () => {
    const withAccount: UserCommand = {
      type: 'UpsertUser',
      userId: 'usr_1',
      input: { clientId: 'u1', paymentsAccountId: 'acct_1' },
      passthrough: false,
    };
    expect(statusData(run([withAccount, set('Suspended')]).last)?.payouts).toBe(true);
    expect(statusData(run([create(), set('Suspended')]).last)?.payouts).toBeUndefined();
    expect(statusData(run([withAccount, set('Suspended'), set('Compliant')]).last)?.payouts).toBeUndefined();
  });

  it('keeps the notice a decision answered', () => {
    const notice = { reportId: 'rpt_1', trusted: false, ground: 'ILLEGAL_CONTENT' as const };
    const command: UserCommand = { ...set('Banned'), basis: { notice } } as UserCommand;
    expect(statusData(run([create(), command]).last)?.notice).toEqual(notice);
  });
});

describe('the appeal window', () => {
  const DAY = 86_400_000;
  const appealAt = (days: number): UserCommand => ({
    type: 'CreateAppeal',
    appealId: 'apl_w',
    text: 'please',
    windowDays: 183,
    at: new Date(Date.parse('2026-01-01T00:00:00.000Z') + days * DAY),
  });

  it('takes an appeal on the last day of the window and refuses one after it', () => {
    // `runStream` dates the events on 2026-01-01 (a second per version): the suspension is decided then.
    expect(run([create(), set('Suspended'), appealAt(183)]).last.map((e) => e.type)).toEqual(['AppealCreated']);
    expect(() => run([create(), set('Suspended'), appealAt(184)])).toThrow(FailedPreconditionError);
  });
});

describe("a flag_and_suspend bank's suspension", () => {
  const grounds = {
    policyId: 'csam',
    name: 'Child safety',
    ground: 'INCOMPATIBLE_CONTENT' as const,
    category: 'STATEMENT_CATEGORY_PROTECTION_OF_MINORS' as const,
    explanation: 'Known abuse imagery',
  };
  const bank = { bankId: 'bnk_1', bankName: 'NCMEC', hashId: 'hsh_1', grounds, recordId: 'rec_1' };
  const byBank = (flaggedCount: number, threshold = 3, viaRecordId = 'rec_1'): UserCommand => ({
    type: 'ReconcileUser',
    actionId: 'act_b',
    flaggedCount,
    threshold,
    viaRecordId,
    bankSuspension: bank,
  });
  const statusData = (events: PendingEvent[]) => {
    const event = events.find((candidate) => candidate.type === 'UserStatusChanged');
    return event?.type === 'UserStatusChanged' ? event.data : undefined;
  };

  it('suspends under the threshold, naming the bank and resting on its policy', () => {
    const { state, last } = run([create(), byBank(1)]);
    expect(state?.status).toBe('Suspended');
    expect(statusData(last)).toMatchObject({
      status: 'Suspended',
      via: 'Automation Flagged Record',
      viaRecordId: 'rec_1',
      reason: expect.stringContaining('"NCMEC" (bnk_1)'),
      grounds,
    });
  });

  it("names the bank's record when another record of the user moved the count", () => {
    expect(statusData(run([create(), byBank(1, 3, 'rec_2')]).last)?.viaRecordId).toBe('rec_1');
  });

  it('is not undone by a reconcile under the threshold while the bank flag stands', () => {
    expect(run([create(), byBank(1), byBank(0), reconcile(0, 3)]).state?.status).toBe('Compliant');
    const standing = run([create(), byBank(1), byBank(0)]);
    expect(standing.last).toEqual([]);
    expect(standing.state?.status).toBe('Suspended');
  });

  it('reinstates once no bank flag stands and the count is under the threshold', () => {
    expect(summary(run([create(), byBank(1), reconcile(0, 3)]).last)).toEqual([
      'Compliant via Automation All Compliant',
    ]);
  });

  it('never suspends a protected user, nor overrides a manual Compliant', () => {
    expect(run([create({ protected: true }), byBank(1)]).state?.status).toBeUndefined();
    expect(run([create(), set('Compliant'), byBank(1)]).state?.status).toBe('Compliant');
  });

  it('pauses the payouts of a user with a payments account, as any suspension', () => {
    const withAccount: UserCommand = {
      type: 'UpsertUser',
      userId: 'usr_1',
      input: { clientId: 'u1', paymentsAccountId: 'acct_1' },
      passthrough: false,
    };
    expect(statusData(run([withAccount, byBank(1)]).last)?.payouts).toBe(true);
  });
});
