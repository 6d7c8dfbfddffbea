import type { ContentData } from '@vigil/proto';
import { NotFoundError, ProtectedError } from './errors';
import type { PendingEvent } from './events';
import { decideRecord, evolveRecord, type RecordCommand, type RecordState } from './record';
import { manualModeration, runStream } from './test-kit';

const content: ContentData = { text: 'hello', imageUrls: [], externalUrls: [] };
let commandSeq = 0;
/** An upsert as a new command each time (ingest commands carry unique ids). */
const upsert = (
  extra: Partial<Extract<RecordCommand, { type: 'UpsertRecord' }>['input']> = {},
  passthrough = false,
): RecordCommand => ({
  type: 'UpsertRecord',
  recordId: 'rec_1',
  input: { clientId: 'c1', name: 'Title', entity: 'post', content, ...extra },
  passthrough,
  commandId: `cmd_${(commandSeq += 1)}`,
});
const upsertBy = (commandId: string): RecordCommand => ({ ...upsert(), commandId }) as RecordCommand;
const auto = (status: 'Compliant' | 'Flagged', commandId?: string): RecordCommand => ({
  type: 'ModerateRecord',
  moderationId: 'mod_a',
  outcome: { status, reasons: status === 'Flagged' ? ['Content contains blocked word'] : [], rules: [] },
  testMode: false,
  commandId,
});
let decisions = 0;
/** A manual decision, each with an id of its own. */
const manual = (status: 'Compliant' | 'Flagged') => manualModeration(status, `mod_m${(decisions += 1)}`);

/** Runs commands in order from nothing; returns the final state and the events of the last command. */
const run = (commands: RecordCommand[]) => runStream('record-rec_1', decideRecord, evolveRecord, commands);

describe('record stream', () => {
  it.each([
    ['an automatic Flagged on a new record', [upsert(), auto('Flagged')], 'Flagged', 'AI', null],
    ['a later automatic Compliant', [upsert(), auto('Flagged'), auto('Compliant')], 'Compliant', 'AI', 'Flagged'],
    [
      'a manual Compliant over an automatic Flagged',
      [upsert(), auto('Flagged'), manual('Compliant')],
      'Compliant',
      'Manual',
      'Flagged',
    ],
    [
      'an automatic Flagged after a manual Compliant (sticky)',
      [upsert(), manual('Compliant'), auto('Flagged')],
      'Compliant',
      'AI',
      'Compliant',
    ],
    [
      'a manual Flagged after a manual Compliant',
      [upsert(), manual('Compliant'), manual('Flagged')],
      'Flagged',
      'Manual',
      'Compliant',
    ],
  ])('records %s', (_name, commands, status, via, previous) => {
    const { state, last } = run(commands);
    expect(last).toHaveLength(1);
    const event = last[0];
    expect(event?.type).toBe('RecordModerated');
    if (event?.type !== 'RecordModerated') return;
    expect(event.data.status).toBe(status);
    expect(event.data.via).toBe(via);
    expect(event.data.previousStatus).toBe(previous);
    expect(state?.status).toBe(status);
  });

  it('keeps the manual decision through automatic moderations, with its reason rather than theirs', () => {
    const { state, last } = run([upsert(), manual('Compliant'), auto('Flagged')]);
    expect(state?.manual).toBe(true);
    expect(state?.status).toBe('Compliant');
    expect(state?.statusUpdatedVia).toBe('Manual');
    expect(state?.reasons).toEqual(['reviewed']);
    expect(state?.rules).toEqual([]);
    // The automatic verdict stays in the record's history.
    expect(last).toMatchObject([{ type: 'RecordModerated', data: { reasons: ['Content contains blocked word'] } }]);

    // A new version of the content keeps the decision and its reason.
    const flagged = run([upsert(), manual('Flagged'), upsert(), auto('Compliant')]).state;
    expect(flagged).toMatchObject({ status: 'Flagged', manualReason: 'reviewed', reasons: ['reviewed'], rules: [] });
  });

  it.each([
    ['merges keys', { a: 1, b: 'x' }, { b: 'y', c: true }, { a: 1, b: 'y', c: true }],
    ['deletes a key set to ""', { a: 1, b: 'x' }, { b: '' }, { a: 1 }],
    ['clears everything with {}', { a: 1 }, {}, {}],
    ['keeps metadata when absent', { a: 'x' }, undefined, { a: 'x' }],
    ['stores values raw on every write', { a: 'x' }, { b: 'y' }, { a: 'x', b: 'y' }],
  ])('metadata update %s', (_name, first, second, expected) => {
    const { state } = run([upsert({ metadata: first }), upsert({ metadata: second })]);
    expect(state?.metadata).toEqual(expected);
  });

  it('keeps the user link when a later upsert omits the user', () => {
    const { state } = run([upsert({ userId: 'usr_1' }), upsert()]);
    expect(state?.userId).toBe('usr_1');
  });

  it('does not keep name or content of a passthrough upsert', () => {
    const { state, last } = run([upsert(), upsert({}, true)]);
    expect(JSON.stringify(last)).not.toContain('Title');
    expect(JSON.stringify(last)).not.toContain('hello');
    expect(state?.name).toBeUndefined();
    expect(state?.content).toBeUndefined();
    expect(state?.passthrough).toBe(true);
  });

  it('remembers a command id once its moderation is stored, to apply each command once', () => {
    const { state } = run([upsertBy('cmd_up'), auto('Compliant', 'cmd_up')]);
    expect(state?.recentCommands).toEqual(['cmd_up']);
  });

  it('does not remember a command whose upsert is stored without its moderation (a crash between the two)', () => {
    const { state } = run([upsertBy('cmd_up')]);
    expect(state?.recentCommands).toEqual([]);
  });

  it('does not upsert again for a command whose upsert is already stored, and then moderates it', () => {
    const { state, last } = run([upsertBy('cmd_up'), upsertBy('cmd_up'), auto('Flagged', 'cmd_up')]);
    expect(state?.version).toBe(2);
    expect(last.map((event) => event.type)).toEqual(['RecordModerated']);
  });

  it('upserts again for a different command with the same content', () => {
    const { state } = run([upsertBy('cmd_up'), upsertBy('cmd_other')]);
    expect(state?.version).toBe(2);
  });

  it.each<[string, RecordCommand[], typeof NotFoundError]>([
    ['moderating a record that does not exist', [auto('Flagged')], NotFoundError],
    ['deleting a record that does not exist', [{ type: 'DeleteRecord' }], NotFoundError],
    ['moderating a deleted record by hand', [upsert(), { type: 'DeleteRecord' }, manual('Flagged')], NotFoundError],
  ])('rejects %s', (_name, commands, error) => {
    expect(() => run(commands)).toThrow(error);
  });

  it('records a manual decision once however often it is sent with the same id, and another decision after it', () => {
    const decision = manual('Compliant');
    const once = run([upsert(), auto('Flagged'), decision]);
    expect(decideRecord(once.state, decision)).toEqual([]);
    // A decision with an id of its own is recorded, even with the same status.
    expect(decideRecord(once.state, manual('Compliant')).map((event) => event.type)).toEqual(['RecordModerated']);
  });

  it('rejects a manual Flagged on a protected record', () => {
    const { state } = run([upsert()]);
    expect(() => decideRecord({ ...(state as RecordState), protected: true }, manual('Flagged'))).toThrow(
      ProtectedError,
    );
  });

  it('deletes once, then is a no-op, and a re-ingest revives the record', () => {
    const deleted = run([upsert(), { type: 'DeleteRecord' }]);
    expect(deleted.state?.deleted).toBe(true);
    expect(decideRecord(deleted.state, { type: 'DeleteRecord' })).toEqual([]);
    const revived = run([upsert(), { type: 'DeleteRecord' }, upsert()]);
    expect(revived.state?.deleted).toBe(false);
  });

  it('keeps sort and createdAt from the first event', () => {
    const { state } = run([upsert(), auto('Flagged'), upsert()]);
    expect(state?.sort).toBe('01TEST00000000000000000001');
    expect(state?.version).toBe(3);
    expect(state?.createdAt.toISOString()).toBe('2026-01-01T00:00:01.000Z');
  });
});

describe("a flag's statement basis", () => {
  const grounds = {
    policyId: 'fraud',
    name: 'Fraud',
    ground: 'INCOMPATIBLE_CONTENT' as const,
    category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD' as const,
    explanation: 'e',
  };
  const basis = { grounds, visibility: 'DECISION_VISIBILITY_CONTENT_REMOVED' as const };
  const data = (events: PendingEvent[]) => (events[0]?.type === 'RecordModerated' ? events[0].data : undefined);

  it.each<[string, RecordCommand[], Record<string, unknown>]>([
    [
      'an automatic flag keeps its policy and the restriction',
      [upsert(), { ...auto('Flagged'), basis } as RecordCommand],
      { grounds, visibility: 'DECISION_VISIBILITY_CONTENT_REMOVED' },
    ],
    [
      'a person upholding an automatic flag confirms it',
      [upsert(), auto('Flagged'), { ...manual('Flagged'), basis } as RecordCommand],
      { grounds, confirmsAutomated: true },
    ],
  ])('%s', (_name, commands, expected) => {
    expect(data(run(commands).last)).toMatchObject(expected);
  });

  it.each<[string, RecordCommand[]]>([
    ['an automatic Compliant carries none', [upsert(), { ...auto('Compliant'), basis } as RecordCommand]],
    [
      'a manual Compliant carries none',
      [upsert(), auto('Flagged'), { ...manual('Compliant'), basis } as RecordCommand],
    ],
  ])('%s', (_name, commands) => {
    const moderated = data(run(commands).last);
    expect(moderated?.grounds).toBeUndefined();
    expect(moderated?.visibility).toBeUndefined();
    expect(moderated?.confirmsAutomated).toBeUndefined();
  });

  it('is not a confirmation when a person flags a compliant record', () => {
    expect(data(run([upsert(), auto('Compliant'), manual('Flagged')]).last)?.confirmsAutomated).toBeUndefined();
  });
});

describe("a flag_and_suspend bank's flag on the record", () => {
  const suspendsUser = { bankId: 'bnk_1', bankName: 'NCMEC', hashId: 'hsh_1' };
  const byBank = (status: 'Compliant' | 'Flagged' = 'Flagged'): RecordCommand => ({
    type: 'ModerateRecord',
    moderationId: 'mod_b',
    outcome: { status, reasons: ['Image 0 matched hash bank'], rules: [] },
    testMode: false,
    suspendsUser,
  });
  const moderated = (events: PendingEvent[]) => {
    const event = events.find((candidate) => candidate.type === 'RecordModerated');
    return event?.type === 'RecordModerated' ? event.data : undefined;
  };

  it('is recorded on the moderation event and stands on the record while it is flagged', () => {
    const { state, last } = run([upsert(), byBank()]);
    expect(moderated(last)?.suspendsUser).toEqual(suspendsUser);
    expect(state?.suspendsUser).toEqual(suspendsUser);
  });

  it('is dropped by a later automatic moderation without it and by a manual Compliant', () => {
    expect(run([upsert(), byBank(), auto('Flagged')]).state?.suspendsUser).toBeUndefined();
    expect(run([upsert(), byBank(), manual('Compliant')]).state?.suspendsUser).toBeUndefined();
  });

  it('stands through a manual Flagged that confirms it', () => {
    expect(run([upsert(), byBank(), manual('Flagged')]).state?.suspendsUser).toEqual(suspendsUser);
  });

  it('is never recorded over a manual decision, nor on a compliant outcome', () => {
    expect(moderated(run([upsert(), manual('Compliant'), byBank()]).last)?.suspendsUser).toBeUndefined();
    expect(moderated(run([upsert(), manual('Flagged'), byBank()]).last)?.suspendsUser).toBeUndefined();
    expect(moderated(run([upsert(), byBank('Compliant')]).last)?.suspendsUser).toBeUndefined();
  });
});
