import type { PolicyGrounds } from '@vigil/proto';
import { ConflictError, NotFoundError, ValidationError } from './errors';
import type { PendingEvent } from './events';
import {
  checkComplaintDecision,
  checkDecision,
  decideReport,
  type ComplaintDecision,
  evolveReport,
  type ReportCommand,
  type ReportDecision,
  type ReportInput,
} from './report';
import { runStream } from './test-kit';

const input = (extra: Partial<ReportInput> = {}): ReportInput => ({
  target: { type: 'record', id: 'rec_1', clientId: 'post-1' },
  reporter: { type: 'user', id: 'reader-1', hasEmail: false },
  category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
  ground: 'INCOMPATIBLE_CONTENT',
  explanation: 'a fake shop',
  goodFaith: false,
  ...extra,
});
const receive = (extra: Partial<ReportInput> = {}): ReportCommand => ({
  type: 'ReceiveReport',
  reportId: 'rpt_1',
  input: input(extra),
});
const decide = (decision: Partial<ReportDecision>, decisionId?: string): ReportCommand => ({
  type: 'DecideReport',
  decision: { outcome: 'NoAction', reason: 'not a scam', actor: 'alice', ...decision },
  decisionId,
});

const DECIDED_AT = Date.UTC(2026, 0, 1);
const DAY_MS = 86_400_000;
/** A complaint `days` after the decision, under a window of 183 days. */
const complain = (days = 1): ReportCommand => ({
  type: 'FileComplaint',
  complaintId: 'cmp_1',
  text: 'please look again',
  now: new Date(DECIDED_AT + days * DAY_MS),
  windowDays: 183,
});
const decideComplaint = (
  decision: Partial<ComplaintDecision>,
  decisionId?: string,
  grounds?: PolicyGrounds,
): ReportCommand => ({
  type: 'DecideComplaint',
  decision: { outcome: 'Rejected', reason: 'still fine', actor: 'carol', ...decision },
  decisionId,
  ...(grounds ? { grounds } : {}),
  visibility: 'DECISION_VISIBILITY_CONTENT_REMOVED',
});
/** The refusal's `reason` (a 409's details), or the error's name. */
function refusal(commands: ReportCommand[]): string {
  try {
    run(commands);
  } catch (err) {
    const reason = (err as ConflictError).details?.reason;
    return typeof reason === 'string' ? reason : (err as Error).name;
  }
  return 'accepted';
}

const run = (commands: ReportCommand[]) => runStream('report-rpt_1', decideReport, evolveReport, commands);

const summary = (events: PendingEvent[]) =>
  events.map((event) =>
    event.type === 'ReportDecided'
      ? `${event.data.outcome}${event.data.action ? ` ${event.data.action}` : ''}`
      : event.type,
  );

describe('report stream', () => {
  it.each<[string, ReportCommand[], string[], 'Open' | 'Decided']>([
    ['receives a report, open', [receive()], ['ReportReceived'], 'Open'],
    ['receives a report once under one id', [receive(), receive({ explanation: 'again' })], [], 'Open'],
    ['decides no action with a reason', [receive(), decide({})], ['NoAction'], 'Decided'],
    [
      'decides to flag a reported record',
      [receive(), decide({ outcome: 'Actioned', action: 'Flag' }, 'mod_1')],
      ['Actioned Flag'],
      'Decided',
    ],
    [
      'decides to ban a reported user',
      [
        receive({ target: { type: 'user', id: 'usr_1', clientId: 'u1' } }),
        decide({ outcome: 'Actioned', action: 'Ban' }, 'act_1'),
      ],
      ['Actioned Ban'],
      'Decided',
    ],
    ['records the same decision once', [receive(), decide({}), decide({ reason: 'twice' })], [], 'Decided'],
  ])('%s', (_name, commands, events, status) => {
    const { state, last } = run(commands);
    expect(summary(last)).toEqual(events);
    expect(state?.status).toBe(status);
  });

  it.each<[string, ReportCommand[], new (...args: never[]) => Error]>([
    ['refuses to decide a report that does not exist', [decide({})], NotFoundError],
    [
      'refuses a different decision on a decided report',
      [receive(), decide({}), decide({ outcome: 'Actioned', action: 'Flag' })],
      ConflictError,
    ],
    ['refuses to suspend a record', [receive(), decide({ outcome: 'Actioned', action: 'Suspend' })], ValidationError],
    [
      'refuses to flag a user',
      [
        receive({ target: { type: 'user', id: 'usr_1', clientId: 'u1' } }),
        decide({ outcome: 'Actioned', action: 'Flag' }),
      ],
      ValidationError,
    ],
    ['refuses to act without an action', [receive(), decide({ outcome: 'Actioned' })], ValidationError],
    ['refuses an action with no action', [receive(), decide({ action: 'Flag' })], ValidationError],
    ['refuses a decision without a reason', [receive(), decide({ reason: '  ' })], ValidationError],
    [
      'refuses a notice of illegal content without its URL',
      [receive({ ground: 'ILLEGAL_CONTENT', legalGround: 'StGB §130', goodFaith: true })],
      ValidationError,
    ],
  ])('%s', (_name, commands, error) => {
    expect(() => run(commands)).toThrow(error);
  });

  it('keeps the notice fields of illegal content, and drops them for content against the terms', () => {
    const notice = { legalGround: 'StGB §130', url: 'https://example.com/p/1', goodFaith: true };
    const illegal = run([receive({ ground: 'ILLEGAL_CONTENT', ...notice })]).state!;
    expect(illegal).toMatchObject({ ...notice, trusted: false, targetId: 'rec_1' });
    const terms = run([receive(notice)]).state!;
    expect(terms.legalGround).toBeUndefined();
    expect(terms.url).toBeUndefined();
    expect(terms.goodFaith).toBe(false);
  });

  it('marks a trusted flagger’s report as trusted, and names the decision it made', () => {
    const { state } = run([
      receive({ reporter: { type: 'trusted_flagger', id: 'tf-1', name: 'Hotline', hasEmail: false } }),
      decide({ outcome: 'Actioned', action: 'Flag' }, 'mod_9'),
    ]);
    expect(state).toMatchObject({
      trusted: true,
      decision: { outcome: 'Actioned', action: 'Flag', decisionId: 'mod_9' },
    });
  });

  it('says a repeated decision is a repeat before anything acts on the target', () => {
    const { state } = run([receive(), decide({})]);
    expect(checkDecision(state, { outcome: 'NoAction', reason: 'x', actor: 'bob' })).toBe('repeat');
    expect(checkDecision(run([receive()]).state, { outcome: 'NoAction', reason: 'x', actor: 'bob' })).toBe('new');
  });
});

describe('complaints about a decision not to act (Art. 20)', () => {
  it.each<[string, ReportCommand[], string]>([
    ['accepts one on the day after a decision not to act', [receive(), decide({}), complain(1)], 'accepted'],
    ['accepts one on the last day of the window', [receive(), decide({}), complain(182)], 'accepted'],
    ['refuses one after the window closed', [receive(), decide({}), complain(184)], 'complaint_window_closed'],
    ['refuses one on an open report', [receive(), complain()], 'report_not_decided'],
    [
      'refuses one on a report acted on',
      [receive(), decide({ outcome: 'Actioned', action: 'Flag' }, 'mod_1'), complain()],
      'report_actioned',
    ],
    ['refuses a second one', [receive(), decide({}), complain(), complain(2)], 'complaint_exists'],
    ['refuses one on a report that does not exist', [complain()], 'NotFoundError'],
  ])('%s', (_name, commands, expected) => {
    expect(refusal(commands)).toBe(expected);
  });

  it('opens the complaint on the report, for the queue of complaints to decide', () => {
    const { state, last } = run([receive(), decide({}), complain()]);
    expect(last.map((event) => event.type)).toEqual(['ReportComplaintFiled']);
    expect(state).toMatchObject({
      status: 'Decided',
      complaintKey: 'ten_1:Open',
      complaint: { id: 'cmp_1', status: 'Open', text: 'please look again' },
    });
  });

  it('upholds a complaint with the action it took and the grounds of its statement', () => {
    const grounds = {
      policyId: 'fraud',
      name: 'Fraud',
      ground: 'ILLEGAL_CONTENT' as const,
      legalGround: 'Penal code §263',
      category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD' as const,
      explanation: 'Fraud.',
    };
    const { state, last } = run([
      receive(),
      decide({}),
      complain(),
      decideComplaint({ outcome: 'Upheld', action: 'Flag', reason: 'fake' }, 'mod_2', grounds),
    ]);
    expect(last).toEqual([
      expect.objectContaining({
        type: 'ReportComplaintDecided',
        data: expect.objectContaining({
          complaintId: 'cmp_1',
          outcome: 'Upheld',
          action: 'Flag',
          decisionId: 'mod_2',
          grounds,
          visibility: 'DECISION_VISIBILITY_CONTENT_REMOVED',
        }),
      }),
    ]);
    expect(state).toMatchObject({ complaintKey: 'ten_1:Upheld', complaint: { status: 'Upheld', decisionId: 'mod_2' } });
  });

  it('rejects a complaint without grounds or visibility: it restricts nothing', () => {
    const { state, last } = run([receive(), decide({}), complain(), decideComplaint({})]);
    const data = (last[0] as PendingEvent & { type: 'ReportComplaintDecided' }).data;
    expect(data).toMatchObject({ outcome: 'Rejected', reason: 'still fine' });
    expect(data.grounds).toBeUndefined();
    expect(data.visibility).toBeUndefined();
    expect(state?.complaintKey).toBe('ten_1:Rejected');
  });

  it.each<[string, ReportCommand[], new (...args: never[]) => Error]>([
    ['refuses to decide a complaint never filed', [receive(), decide({}), decideComplaint({})], NotFoundError],
    [
      'refuses to uphold without an action',
      [receive(), decide({}), complain(), decideComplaint({ outcome: 'Upheld' })],
      ValidationError,
    ],
    [
      'refuses to reject with an action',
      [receive(), decide({}), complain(), decideComplaint({ action: 'Flag' })],
      ValidationError,
    ],
    [
      'refuses another decision on a decided complaint',
      [receive(), decide({}), complain(), decideComplaint({}), decideComplaint({ outcome: 'Upheld', action: 'Flag' })],
      ConflictError,
    ],
  ])('%s', (_name, commands, error) => {
    expect(() => run(commands)).toThrow(error);
  });

  it('records the same complaint decision once, and says so before anything acts', () => {
    const { state, last } = run([receive(), decide({}), complain(), decideComplaint({}), decideComplaint({})]);
    expect(last).toEqual([]);
    expect(checkComplaintDecision(state, { outcome: 'Rejected', reason: 'x', actor: 'bob' })).toBe('repeat');
  });
});
