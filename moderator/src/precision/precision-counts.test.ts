import type { ContentData, DomainEvent, RuleCounts } from '@vigil/proto';
import { decideRecord, evolveRecord, type RecordCommand } from '../domain/record';
import { manualModeration, runStream } from '../domain/test-kit';
import { decideUser, evolveUser, type UserCommand } from '../domain/user';
import { countsOf, isDegraded, writesOf, type CountDelta } from './precision-counts';

const content: ContentData = { text: 'hello', imageUrls: [], externalUrls: [] };
const upsert: RecordCommand = {
  type: 'UpsertRecord',
  recordId: 'rec_1',
  input: { clientId: 'c1', name: 'Title', entity: 'post', content },
  passthrough: false,
};
let seq = 0;
const auto = (rules: string[], ruleSetVersion = 3, testMode = false): RecordCommand => ({
  type: 'ModerateRecord',
  moderationId: `mod_a${(seq += 1)}`,
  outcome: { status: rules.length ? 'Flagged' : 'Compliant', reasons: rules.map((rule) => `by ${rule}`), rules },
  testMode,
  ruleSetVersion,
});
const manual = (status: 'Compliant' | 'Flagged') => manualModeration(status, `mod_m${(seq += 1)}`);

/** Every event of the commands on one record, stamped as the store would. */
const recordEvents = (commands: RecordCommand[]): DomainEvent[] =>
  runStream('record-rec_1', decideRecord, evolveRecord, commands).events;

const userEvents = (commands: UserCommand[]): DomainEvent[] =>
  runStream('user-usr_1', decideUser, evolveUser, commands).events;

/** The deltas summed per `version/rule`, zero fields left out. */
function totals(deltas: CountDelta[]): Record<string, Partial<RuleCounts>> {
  const out: Record<string, Partial<RuleCounts>> = {};
  for (const delta of deltas) {
    const key = `v${delta.ruleSetVersion}/${delta.ruleId}`;
    const into = (out[key] ??= {});
    for (const [field, by] of Object.entries(delta.counts) as [keyof RuleCounts, number][]) {
      into[field] = (into[field] ?? 0) + by;
      if (into[field] === 0) delete into[field];
    }
  }
  return out;
}

describe('rule counts of record decisions', () => {
  it.each<[string, RecordCommand[], Record<string, Partial<RuleCounts>>]>([
    ['a compliant moderation counts nothing', [upsert, auto([])], {}],
    [
      'a flag counts once per rule it matched',
      [upsert, auto(['spam', 'slurs'])],
      {
        'v3/spam': { flags: 1 },
        'v3/slurs': { flags: 1 },
      },
    ],
    [
      'a test-mode flag still counts (the rule flagged)',
      [upsert, auto(['spam'], 3, true)],
      { 'v3/spam': { flags: 1 } },
    ],
    [
      'a person keeping the flag confirms it',
      [upsert, auto(['spam']), manual('Flagged')],
      {
        'v3/spam': { flags: 1, reviewed: 1, confirmed: 1 },
      },
    ],
    [
      'a person clearing the flag overturns every rule of it',
      [upsert, auto(['spam', 'slurs'], 5), manual('Compliant')],
      {
        'v5/spam': { flags: 1, reviewed: 1, overturned: 1 },
        'v5/slurs': { flags: 1, reviewed: 1, overturned: 1 },
      },
    ],
    [
      'a changed decision moves the count, and is reviewed once',
      [upsert, auto(['spam']), manual('Compliant'), manual('Flagged')],
      {
        'v3/spam': { flags: 1, reviewed: 1, confirmed: 1 },
      },
    ],
    [
      'the same decision twice counts once',
      [upsert, auto(['spam']), manual('Compliant'), manual('Compliant')],
      {
        'v3/spam': { flags: 1, reviewed: 1, overturned: 1 },
      },
    ],
    ['a decision on a record no rule flagged counts nothing', [upsert, auto([]), manual('Flagged')], {}],
    ['a decision before any automatic flag counts nothing', [upsert, manual('Compliant')], {}],
    [
      'a new flag after a review is reviewed afresh',
      [upsert, auto(['spam']), manual('Compliant'), auto(['spam'], 4), manual('Flagged')],
      {
        'v3/spam': { flags: 1, reviewed: 1, overturned: 1 },
        'v4/spam': { flags: 1, reviewed: 1, confirmed: 1 },
      },
    ],
  ])('%s', (_name, commands, expected) => {
    expect(totals(countsOf(recordEvents(commands)))).toEqual(expected);
  });
});

const createUser: UserCommand = { type: 'UpsertUser', userId: 'usr_1', input: { clientId: 'u1' }, passthrough: false };
const suspend: UserCommand = {
  type: 'ReconcileUser',
  actionId: 'act_r',
  flaggedCount: 1,
  threshold: 1,
  viaRecordId: 'rec_1',
  viaFlag: { rules: ['spam'], ruleSetVersion: 2 },
};
const setStatus = (status: 'Compliant' | 'Suspended' | 'Banned'): UserCommand => ({
  type: 'SetUserStatus',
  actionId: `act_${(seq += 1)}`,
  status,
  reason: 'r',
  actor: 'alice',
});
const appeal: UserCommand = { type: 'CreateAppeal', appealId: 'apl_1', text: 'please' };
const decide = (decision: 'Approved' | 'Rejected'): UserCommand => ({
  type: 'DecideAppeal',
  appealId: 'apl_1',
  decision,
  reason: '',
  actor: 'bob',
  actionId: 'act_a',
});

describe('rule counts of user decisions', () => {
  it.each<[string, UserCommand[], Record<string, Partial<RuleCounts>>]>([
    ['an automatic suspension counts nothing by itself', [createUser, suspend], {}],
    [
      'a person reinstating the user overturns the suspending flag',
      [createUser, suspend, setStatus('Compliant')],
      {
        'v2/spam': { reviewed: 1, overturned: 1 },
      },
    ],
    [
      'a user update between the suspension and the decision keeps the flag',
      [createUser, suspend, { ...createUser, input: { clientId: 'u1', username: 'renamed' } }, setStatus('Compliant')],
      { 'v2/spam': { reviewed: 1, overturned: 1 } },
    ],
    [
      'a person banning the user confirms it',
      [createUser, suspend, setStatus('Banned')],
      {
        'v2/spam': { reviewed: 1, confirmed: 1 },
      },
    ],
    [
      'an appeal granted overturns it',
      [createUser, suspend, appeal, decide('Approved')],
      {
        'v2/spam': { reviewed: 1, overturned: 1 },
      },
    ],
    [
      'an appeal rejected confirms it',
      [createUser, suspend, appeal, decide('Rejected')],
      {
        'v2/spam': { reviewed: 1, confirmed: 1 },
      },
    ],
    [
      'automation reinstating the user ends the flag: a later decision counts nothing',
      [createUser, suspend, { ...suspend, flaggedCount: 0, actionId: 'act_r2' }, setStatus('Suspended')],
      {},
    ],
    [
      'a suspension by a manual flag (no rules) counts nothing',
      [createUser, { ...suspend, viaFlag: null }, setStatus('Compliant')],
      {},
    ],
  ])('%s', (_name, commands, expected) => {
    expect(totals(countsOf(userEvents(commands)))).toEqual(expected);
  });
});

describe('counter writes', () => {
  it('merges the deltas of a group into one update per day document and per totals document, of this writer', () => {
    const deltas = countsOf([
      ...recordEvents([upsert, auto(['spam', 'slurs'])]),
      ...recordEvents([upsert, auto(['spam'])]),
    ]);
    const writes = writesOf(deltas, 'w1');
    expect(writes).toEqual([
      {
        _id: 'ten_1|3|2026-01-01|w1',
        inc: { 'rules.spam.flags': 2, 'rules.slurs.flags': 1 },
        setOnInsert: { tenantId: 'ten_1', ruleSetVersion: 3, day: '2026-01-01', month: 'ten_1|2026-01' },
      },
      {
        _id: 'ten_1|3|all|w1',
        inc: { 'rules.spam.flags': 2, 'rules.slurs.flags': 1 },
        setOnInsert: { tenantId: 'ten_1', ruleSetVersion: 3, day: 'all', totals: 'ten_1|3' },
      },
    ]);
  });

  it('writes nothing for moves that cancel out', () => {
    const move = (from: 'confirmed' | 'overturned', to: 'confirmed' | 'overturned'): CountDelta => ({
      tenantId: 't',
      ruleSetVersion: 1,
      ruleId: 'spam',
      day: '2026-01-01',
      counts: { [to]: 1, [from]: -1 },
      correlationId: 'c',
    });
    expect(writesOf([move('confirmed', 'overturned'), move('overturned', 'confirmed')], 'w1')).toEqual([]);
  });
});

describe('degraded rules', () => {
  const counts = (reviewed: number, overturned: number): RuleCounts => ({
    flags: reviewed,
    reviewed,
    confirmed: reviewed - overturned,
    overturned,
  });
  it.each<[string, RuleCounts, number | null, number, boolean]>([
    ['off when the tenant set no rate', counts(100, 100), null, 1, false],
    ['not below the minimum of reviews', counts(4, 4), 0.5, 5, false],
    ['at the rate, with enough reviews', counts(10, 5), 0.5, 10, true],
    ['below the rate', counts(10, 4), 0.5, 10, false],
  ])('%s', (_name, given, overturnRate, minReviews, expected) => {
    expect(isDegraded(given, { overturnRate, minReviews })).toBe(expected);
  });
});
