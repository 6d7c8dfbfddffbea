import { BACKTEST_LIMITS } from '@vigil/proto';
import { BacktestTally, type JudgedRecord } from './backtest-tally';

const flagged = (rules: string[]) => ({ status: 'Flagged' as const, reasons: rules.map((r) => `by ${r}`), rules });
const compliant = { status: 'Compliant' as const, reasons: [], rules: [] };
const rec = (id: string, over: Partial<JudgedRecord>): JudgedRecord => ({
  recordId: id,
  manual: false,
  candidate: compliant,
  ...over,
});
const ai = { enabled: false, calls: 0, recordsWithoutAi: 0 };

describe('BacktestTally', () => {
  it('counts status changes each way, with examples, and leaves unchanged records out', () => {
    const tally = new BacktestTally(['a', 'b']);
    tally.add(rec('r1', { current: 'Compliant', candidate: flagged(['a']) }));
    tally.add(rec('r2', { candidate: flagged(['a', 'b']) })); // never moderated: Compliant before
    tally.add(rec('r3', { current: 'Flagged', candidate: compliant }));
    tally.add(rec('r4', { current: 'Flagged', candidate: flagged(['b']) }));
    tally.skip('passthrough');
    const result = tally.result({ truncated: false, threshold: 3, users: [], usersMore: false, ai });
    expect(result.judged).toBe(4);
    expect(result.skipped).toEqual({ passthrough: 1, gone: 0 });
    expect(result.changes).toMatchObject({ toFlagged: 2, toCompliant: 1, heldByHumans: 0 });
    expect(result.changes.toFlaggedExamples.map((e) => e.recordId)).toEqual(['r1', 'r2']);
    expect(result.changes.toCompliantExamples).toEqual([{ recordId: 'r3', reasons: [] }]);
    expect(result.rules).toEqual([
      expect.objectContaining({ ruleId: 'a', flags: 2 }),
      expect.objectContaining({ ruleId: 'b', flags: 2 }),
    ]);
  });

  it('compares with human decisions, which stay, and counts per rule what humans confirmed or overturned', () => {
    const tally = new BacktestTally(['a']);
    tally.add(rec('h1', { current: 'Flagged', manual: true, candidate: flagged(['a']) }));
    tally.add(rec('h2', { current: 'Compliant', manual: true, candidate: flagged(['a']) }));
    tally.add(rec('h3', { current: 'Compliant', manual: true, candidate: compliant }));
    const result = tally.result({ truncated: false, threshold: 3, users: [], usersMore: false, ai });
    expect(result.humans).toEqual({ reviewed: 3, agree: 2, disagree: 1 });
    expect(result.changes).toMatchObject({ toFlagged: 0, toCompliant: 0, heldByHumans: 1 });
    expect(result.rules[0]).toMatchObject({ flags: 2, humanConfirmed: 1, humanOverturned: 1 });
  });

  it('bounds examples per rule and per direction', () => {
    const tally = new BacktestTally(['a']);
    for (let i = 0; i < BACKTEST_LIMITS.examples + 5; i += 1) tally.add(rec(`r${i}`, { candidate: flagged(['a']) }));
    const result = tally.result({ truncated: true, threshold: 3, users: [], usersMore: false, ai });
    expect(result.rules[0]!.examples).toHaveLength(BACKTEST_LIMITS.examples);
    expect(result.changes.toFlaggedExamples).toHaveLength(BACKTEST_LIMITS.examples);
    expect(result.changes.toFlagged).toBe(BACKTEST_LIMITS.examples + 5);
    expect(result.truncated).toBe(true);
  });

  it.each([
    ['reaches the threshold', { flaggedCount: 2 }, 'wouldSuspend'],
    ['is already over it', { flaggedCount: 3 }, null],
    ['is protected', { flaggedCount: 2, protected: true }, null],
    ['was decided by a human', { flaggedCount: 2, manual: true }, null],
    ['is banned', { flaggedCount: 2, status: 'Banned' as const }, null],
  ])('lists a user who gains a flagged record and %s accordingly', (_, user, list) => {
    const tally = new BacktestTally(['a']);
    tally.add(rec('r1', { userId: 'usr_1', candidate: flagged(['a']) }));
    const result = tally.result({
      truncated: false,
      threshold: 3,
      users: [{ userId: 'usr_1', manual: false, protected: false, ...user }],
      usersMore: false,
      ai,
    });
    expect(result.users.wouldSuspend).toEqual(list === 'wouldSuspend' ? ['usr_1'] : []);
    expect(result.users.wouldReinstate).toEqual([]);
  });

  it('lists a suspended user who would drop below the threshold, and only users whose count moved', () => {
    const tally = new BacktestTally(['a']);
    tally.add(rec('r1', { userId: 'usr_1', current: 'Flagged', candidate: compliant }));
    tally.add(rec('r2', { userId: 'usr_2', current: 'Flagged', candidate: flagged(['a']) }));
    const { moved, more } = tally.movedUsers();
    expect([...moved]).toEqual([['usr_1', -1]]);
    expect(more).toBe(false);
    const result = tally.result({
      truncated: false,
      threshold: 3,
      users: [{ userId: 'usr_1', flaggedCount: 3, status: 'Suspended', manual: false, protected: false }],
      usersMore: false,
      ai,
    });
    expect(result.users.wouldReinstate).toEqual(['usr_1']);
  });

  it('looks up at most the given number of moved users', () => {
    const tally = new BacktestTally(['a']);
    for (let i = 0; i < 5; i += 1) tally.add(rec(`r${i}`, { userId: `usr_${i}`, candidate: flagged(['a']) }));
    const { moved, more } = tally.movedUsers(3);
    expect(moved.size).toBe(3);
    expect(more).toBe(true);
  });
});
