import { recordModerated, reportComplaintDecided, userStatusChanged } from '../../deploy/test-support/events';
import type { DomainEvent } from './events';
import { Policy } from './policies';
import { statementOf } from './statements';

const at = '2026-03-01T10:00:00.000Z';
const envelope = { tenantId: 'ten_a', version: 2, occurredAt: at, correlationId: 'c' };

function moderated(data: Record<string, unknown>): DomainEvent {
  return recordModerated(
    { reasons: ['Content contains blocked word: secretword'], rules: ['scams'], userId: 'usr_1', ...data },
    { ...envelope, id: '01JEVENT0000000000000000AA' },
  );
}

function statusChanged(data: Record<string, unknown>): DomainEvent {
  return userStatusChanged({ reason: 'repeated scams', ...data }, { ...envelope, id: '01JEVENT0000000000000000BB' });
}

const context = { appealWindowDays: 183 };
const fraud = {
  policyId: 'fraud',
  name: 'Fraud',
  ground: 'ILLEGAL_CONTENT' as const,
  legalGround: 'Penal code §263',
  category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD' as const,
  explanation: 'Scams are illegal; matched by {{rules}}.',
  referenceUrl: 'https://law.example/263',
};

describe('statements of reasons', () => {
  it.each<[string, DomainEvent, Record<string, unknown> | null]>([
    [
      'an engine flag: fully automated, own initiative, the default policy',
      moderated({}),
      {
        kind: 'restriction',
        automatedDetection: true,
        automatedDecision: 'AUTOMATED_DECISION_FULLY',
        source: 'SOURCE_VOLUNTARY',
        ground: 'DECISION_GROUND_INCOMPATIBLE_CONTENT',
        category: 'STATEMENT_CATEGORY_OTHER_VIOLATION_TC',
        restriction: { visibility: ['DECISION_VISIBILITY_CONTENT_DISABLED'], endDate: null },
      },
    ],
    [
      'a person upholding an automated flag: partially automated',
      moderated({ via: 'Manual', previousStatus: 'Flagged', confirmsAutomated: true, reasons: ['checked'], rules: [] }),
      { automatedDetection: true, automatedDecision: 'AUTOMATED_DECISION_PARTIALLY' },
    ],
    [
      'a person flagging on a trusted flagger notice: not automated',
      moderated({
        via: 'Manual',
        reasons: ['confirmed'],
        rules: [],
        notice: { reportId: 'rpt_1', trusted: true, ground: 'ILLEGAL_CONTENT' },
      }),
      {
        automatedDetection: false,
        automatedDecision: 'AUTOMATED_DECISION_NOT_AUTOMATED',
        source: 'SOURCE_TRUSTED_FLAGGER',
        reportId: 'rpt_1',
      },
    ],
    [
      'a user notice of illegal content',
      moderated({ via: 'Manual', notice: { reportId: 'rpt_2', trusted: false, ground: 'ILLEGAL_CONTENT' } }),
      { source: 'SOURCE_ARTICLE_16' },
    ],
    [
      'a user report against the terms',
      moderated({ via: 'Manual', notice: { reportId: 'rpt_3', trusted: false, ground: 'INCOMPATIBLE_CONTENT' } }),
      { source: 'SOURCE_TYPE_OTHER_NOTIFICATION' },
    ],
    [
      "a flag under a policy, with the tenant's visibility restriction",
      moderated({ grounds: fraud, visibility: 'DECISION_VISIBILITY_CONTENT_REMOVED' }),
      {
        ground: 'DECISION_GROUND_ILLEGAL_CONTENT',
        legalGround: 'Penal code §263',
        category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
        explanation: 'Scams are illegal; matched by scams.',
        referenceUrl: 'https://law.example/263',
        policy: { id: 'fraud', name: 'Fraud' },
        restriction: { visibility: ['DECISION_VISIBILITY_CONTENT_REMOVED'], endDate: null },
      },
    ],
    ['an automatic re-moderation that keeps the flag', moderated({ previousStatus: 'Flagged' }), null],
    ['a moderation in test mode', moderated({ testMode: true }), null],
    ['a compliant moderation', moderated({ status: 'Compliant', previousStatus: null }), null],
    [
      'a flag lifted',
      moderated({ status: 'Compliant', previousStatus: 'Flagged', via: 'Manual' }),
      { kind: 'reversal', restriction: { endDate: null } },
    ],
    [
      'a suspension by hand of a user with payouts',
      statusChanged({ payouts: true }),
      {
        kind: 'restriction',
        subject: { type: 'user', id: 'usr_1' },
        restriction: {
          account: 'DECISION_ACCOUNT_SUSPENDED',
          monetary: 'DECISION_MONETARY_SUSPENSION',
          endDate: null,
        },
        automatedDecision: 'AUTOMATED_DECISION_NOT_AUTOMATED',
      },
    ],
    [
      'a ban',
      statusChanged({ status: 'Banned' }),
      { restriction: { account: 'DECISION_ACCOUNT_TERMINATED', endDate: null } },
    ],
    [
      'an automatic suspension at the threshold',
      statusChanged({ via: 'Automation Flagged Record', reason: undefined }),
      { automatedDetection: true, automatedDecision: 'AUTOMATED_DECISION_FULLY' },
    ],
    [
      'a reinstatement',
      statusChanged({ status: 'Compliant', previousStatus: 'Suspended' }),
      { kind: 'reversal', restriction: { endDate: null } },
    ],
  ])('%s', (_name, event, expected) => {
    const statement = statementOf(event, context);
    if (expected === null) expect(statement).toBeNull();
    else expect(statement).toMatchObject(expected);
  });

  it('names the redress: the appeal link and the window from the decision', () => {
    const statement = statementOf(moderated({}), { appealWindowDays: 200, appealUrl: 'https://x.example/appeal' });
    expect(statement?.redress).toMatchObject({
      appealUrl: 'https://x.example/appeal',
      appealWindowDays: 200,
      appealOpenUntil: '2026-09-17T10:00:00.000Z',
    });
    expect(statement?.id).toBe('sor_01JEVENT0000000000000000AA');
  });

  it('keeps the text an engine reason matched out of the facts', () => {
    const statement = statementOf(moderated({}), context)!;
    expect(statement.facts).toContain('Content contains blocked word');
    expect(JSON.stringify(statement)).not.toContain('secretword');
  });

  it('keeps the facts within 5,000 characters', () => {
    const statement = statementOf(moderated({ via: 'Manual', reasons: ['r'.repeat(6000)] }), context)!;
    expect([...statement.facts].length).toBe(5000);
  });
});

describe('policies', () => {
  const base = {
    id: 'fraud',
    name: 'Fraud',
    ground: 'ILLEGAL_CONTENT',
    legalGround: 'x',
    category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
    explanation: 'e',
  };
  it.each<[string, Record<string, unknown>, string]>([
    ['illegal content without its legal ground', { legalGround: undefined }, 'legalGround'],
    ['a legal ground on a terms policy', { ground: 'INCOMPATIBLE_CONTENT' }, 'legalGround'],
    ['an unknown category', { category: 'STATEMENT_CATEGORY_RUDENESS' }, 'category'],
    ['an unknown placeholder', { explanation: 'Hello {{name}}' }, 'explanation'],
    ['a reference that is not http(s)', { referenceUrl: 'javascript:alert(1)' }, 'referenceUrl'],
    ['an id with capitals', { id: 'Fraud' }, 'id'],
  ])('refuses %s', (_name, change, path) => {
    const result = Policy.safeParse({ ...base, ...change });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toContain(path);
  });
});

describe('statements of complaint decisions (Art. 20(5))', () => {
  const complaintDecided = (data: Record<string, unknown>): DomainEvent =>
    reportComplaintDecided(
      { outcome: 'Rejected', reason: 'the shop is genuine', ...data },
      { ...envelope, id: '01JEVENT0000000000000000CC' },
    );

  it('states an upheld complaint with the restriction its action imposed and its policy', () => {
    const statement = statementOf(
      complaintDecided({
        outcome: 'Upheld',
        action: 'Flag',
        decisionId: 'mod_9',
        grounds: fraud,
        visibility: 'DECISION_VISIBILITY_CONTENT_REMOVED',
      }),
      context,
    );
    expect(statement).toMatchObject({
      id: 'sor_01JEVENT0000000000000000CC',
      kind: 'complaint',
      decisionId: 'cmp_1',
      subject: { type: 'record', id: 'rec_1' },
      restriction: { visibility: ['DECISION_VISIBILITY_CONTENT_REMOVED'], endDate: null },
      ground: 'DECISION_GROUND_ILLEGAL_CONTENT',
      legalGround: 'Penal code §263',
      policy: { id: 'fraud', name: 'Fraud' },
      source: 'SOURCE_TYPE_OTHER_NOTIFICATION',
      reportId: 'rpt_1',
      complaint: { id: 'cmp_1', outcome: 'Upheld', actionDecisionId: 'mod_9' },
      automatedDetection: false,
      automatedDecision: 'AUTOMATED_DECISION_NOT_AUTOMATED',
      redress: { appealUrl: null, appealWindowDays: 0 },
    });
    expect(statement?.facts).toBe(
      'The complaint was upheld by a moderator, and the content was removed, after a report from a user. ' +
        'Policy: Fraud. Reasons: the shop is genuine.',
    );
  });

  it('states a rejected complaint without a restriction, a ground or a policy', () => {
    const statement = statementOf(complaintDecided({ ground: 'ILLEGAL_CONTENT' }), context)!;
    expect(statement).toMatchObject({
      kind: 'complaint',
      restriction: { endDate: null },
      source: 'SOURCE_ARTICLE_16',
      complaint: { id: 'cmp_1', outcome: 'Rejected' },
    });
    expect(statement.restriction.visibility).toBeUndefined();
    // Nor in its JSON (the API, the webhook and the email's stored statement): no field at all, not a blank one.
    const json = JSON.parse(JSON.stringify(statement)) as Record<string, unknown>;
    for (const field of ['ground', 'legalGround', 'policy', 'referenceUrl']) expect(json).not.toHaveProperty(field);
    // The policy a rejected complaint's event may carry (an earlier release wrote it) is not named either.
    const withGrounds = statementOf(complaintDecided({ grounds: fraud }), context)!;
    expect(withGrounds).not.toHaveProperty('ground');
    expect(withGrounds).not.toHaveProperty('policy');
    expect(JSON.stringify(withGrounds)).not.toContain('Fraud');
  });
});
