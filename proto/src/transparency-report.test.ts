import { ulid } from 'ulid';
import {
  recordModerated,
  reportComplaintDecided,
  reportDecided,
  reportReceived,
  userStatusChanged,
} from '../../deploy/test-support/events';
import type { DomainEvent } from './events';
import { timeBucketOf, timeOfId, transparencyCountsOf } from './transparency-report';

const at = '2026-03-01T10:00:00.000Z';
const AT_MS = Date.parse(at);
const envelope = {
  tenantId: 'ten_a',
  version: 2,
  occurredAt: at,
  correlationId: 'c',
  id: '01JEVENT0000000000000000AA',
};
const policy = {
  policyId: 'scam',
  name: 'Scams',
  ground: 'ILLEGAL_CONTENT' as const,
  legalGround: 'Fraud act',
  category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD' as const,
  explanation: 'x',
};

const moderated = (data: Record<string, unknown>): DomainEvent =>
  recordModerated({ rules: ['spam'], ...data }, envelope);

const statusChanged = (data: Record<string, unknown>): DomainEvent => userStatusChanged(data, envelope);

const paths = (event: DomainEvent) =>
  transparencyCountsOf(event).map(({ day, path, by }) => `${day} ${path.join('.')} ${by}`);

const DAY = '2026-03-01';

describe('transparencyCountsOf', () => {
  it.each<[string, DomainEvent, string[]]>([
    [
      'an automatic flag: an own-initiative restriction, fully automated, under the default policy',
      moderated({}),
      [
        `${DAY} decisions.SOURCE_VOLUNTARY.DECISION_GROUND_INCOMPATIBLE_CONTENT.STATEMENT_CATEGORY_OTHER_VIOLATION_TC.AUTOMATED_DECISION_FULLY 1`,
        `${DAY} restrictions.SOURCE_VOLUNTARY.DECISION_VISIBILITY_CONTENT_DISABLED.AUTOMATED_DECISION_FULLY 1`,
      ],
    ],
    [
      'a person confirming an automated flag: partially automated, and a confirmed review',
      moderated({
        via: 'Manual',
        previousStatus: 'Flagged',
        confirmsAutomated: true,
        grounds: policy,
        visibility: 'DECISION_VISIBILITY_CONTENT_REMOVED',
        review: { rules: ['spam'], ruleSetVersion: 1, outcome: 'confirmed' },
      }),
      [
        `${DAY} decisions.SOURCE_VOLUNTARY.DECISION_GROUND_ILLEGAL_CONTENT.STATEMENT_CATEGORY_SCAMS_AND_FRAUD.AUTOMATED_DECISION_PARTIALLY 1`,
        `${DAY} restrictions.SOURCE_VOLUNTARY.DECISION_VISIBILITY_CONTENT_REMOVED.AUTOMATED_DECISION_PARTIALLY 1`,
        `${DAY} reviews.confirmed 1`,
        `${DAY} reviews.reviewed 1`,
      ],
    ],
    [
      "a reporter's complaint about no action, received",
      {
        ...envelope,
        stream: 'report-rpt_1',
        type: 'ReportComplaintFiled',
        data: {
          reportId: 'rpt_1',
          complaintId: 'cmp_1',
          target: { type: 'record', id: 'rec_1', clientId: 'c1' },
          reporter: { type: 'user', id: 'u1' },
          text: '',
        },
      },
      [`${DAY} complaints.received.report 1`],
    ],
    [
      "a reporter's complaint upheld 90 s after it was received: the decision not to act is reversed",
      reportComplaintDecided({
        complaintId: `cmp_${ulid(AT_MS - 90_000)}`,
        target: { type: 'record', id: 'rec_1', clientId: 'c1' },
        reporter: { type: 'user', id: 'u1', hasEmail: false },
        outcome: 'Upheld',
        action: 'Flag',
        reason: 'on second look',
      }),
      [`${DAY} complaints.decided.report.reversed 1`, `${DAY} complaints.time.report.t90 1`],
    ],
    [
      'a person overturning an automated flag: a reversal by a moderator, an overturned review',
      moderated({
        via: 'Manual',
        status: 'Compliant',
        previousStatus: 'Flagged',
        review: { rules: ['spam'], ruleSetVersion: 1, outcome: 'overturned' },
      }),
      [`${DAY} reversals.manual 1`, `${DAY} reviews.overturned 1`, `${DAY} reviews.reviewed 1`],
    ],
    [
      'a changed review moves its count',
      moderated({
        via: 'Manual',
        status: 'Compliant',
        previousStatus: 'Flagged',
        review: { rules: ['spam'], ruleSetVersion: 1, outcome: 'overturned', previous: 'confirmed' },
      }),
      [`${DAY} reversals.manual 1`, `${DAY} reviews.overturned 1`, `${DAY} reviews.confirmed -1`],
    ],
    ['a test-mode flag counts nowhere', moderated({ testMode: true }), []],
    ['an automatic moderation that leaves a record compliant counts nowhere', moderated({ status: 'Compliant' }), []],
    [
      'a ban with payouts, on a trusted flagger’s notice: two restrictions, one decision',
      statusChanged({
        status: 'Banned',
        payouts: true,
        notice: { reportId: 'rpt_1', trusted: true, ground: 'INCOMPATIBLE_CONTENT' },
      }),
      [
        `${DAY} decisions.SOURCE_TRUSTED_FLAGGER.DECISION_GROUND_INCOMPATIBLE_CONTENT.STATEMENT_CATEGORY_OTHER_VIOLATION_TC.AUTOMATED_DECISION_NOT_AUTOMATED 1`,
        `${DAY} restrictions.SOURCE_TRUSTED_FLAGGER.DECISION_ACCOUNT_TERMINATED.AUTOMATED_DECISION_NOT_AUTOMATED 1`,
        `${DAY} restrictions.SOURCE_TRUSTED_FLAGGER.DECISION_MONETARY_TERMINATION.AUTOMATED_DECISION_NOT_AUTOMATED 1`,
      ],
    ],
    [
      'a reinstatement after an appeal: a reversal after a complaint',
      statusChanged({ status: 'Compliant', previousStatus: 'Suspended', via: 'Automation Appeal Approved' }),
      [`${DAY} reversals.appeal 1`],
    ],
    [
      'an appeal received',
      {
        ...envelope,
        stream: 'user-usr_1',
        type: 'AppealCreated',
        data: { appealId: 'apl_1', userId: 'usr_1', text: '' },
      },
      [`${DAY} complaints.received.appeal 1`],
    ],
    [
      'an appeal rejected 90 s after it was received: upheld, with its time',
      {
        ...envelope,
        stream: 'user-usr_1',
        type: 'AppealDecided',
        data: {
          appealId: `apl_${ulid(AT_MS - 90_000)}`,
          userId: 'usr_1',
          status: 'Rejected',
          via: 'Manual',
          review: { rules: ['spam'], ruleSetVersion: 1, outcome: 'confirmed' },
        },
      },
      [
        `${DAY} complaints.decided.appeal.upheld 1`,
        `${DAY} complaints.time.appeal.t90 1`,
        `${DAY} reviews.confirmed 1`,
        `${DAY} reviews.reviewed 1`,
      ],
    ],
    [
      'a report received from a user',
      reportReceived({
        target: { type: 'record', id: 'rec_1', clientId: 'c' },
        reporter: { type: 'user', id: 'u1', hasEmail: false },
        category: 'STATEMENT_CATEGORY_VIOLENCE',
        ground: 'ILLEGAL_CONTENT',
        explanation: 'x',
      }),
      [`${DAY} notices.received.user.ILLEGAL_CONTENT.STATEMENT_CATEGORY_VIOLENCE 1`],
    ],
    [
      'a report decided an hour after it was received',
      reportDecided({
        reportId: `rpt_${ulid(AT_MS - 3_600_000)}`,
        target: { type: 'record', id: 'rec_1', clientId: 'c' },
        reporter: { type: 'trusted_flagger', id: 'tf' },
        category: 'STATEMENT_CATEGORY_VIOLENCE',
        reason: 'fine',
      }),
      [
        `${DAY} notices.decided.trusted_flagger.STATEMENT_CATEGORY_VIOLENCE.NoAction 1`,
        `${DAY} notices.time.trusted_flagger.t3600 1`,
      ],
    ],
  ])('%s', (_name, event, expected) => {
    expect(paths(event)).toEqual(expected);
  });
});

describe('time buckets and id times', () => {
  it.each([
    [0, 't0'],
    [99_999, 't99'],
    [100_000, 't100'],
    [1_234_000, 't1200'],
    [86_399_000, 't86000'],
    [-5, 't0'],
  ])('%d ms is %s', (ms, bucket) => {
    expect(timeBucketOf(ms)).toBe(bucket);
  });

  it('reads the time of a ULID id, and none of another', () => {
    expect(timeOfId(`rpt_${ulid(AT_MS)}`)).toBe(AT_MS);
    expect(timeOfId('apl_1')).toBeNull();
  });
});
