import type { DomainEvent } from '@vigil/proto';
import {
  recordModerated,
  reportComplaintDecided,
  reportDecided,
  reportReceived,
  userStatusChanged,
} from '../../../deploy/test-support/events';
import {
  deliveryIdOf,
  hashPayload,
  recordPayload,
  reportPayload,
  rulePayload,
  subscribes,
  triggerOf,
  userPayload,
  webhookBody,
  webhookIdOf,
  type WebhookTrigger,
} from './webhook-events';

const envelope = {
  id: 'evt_01',
  tenantId: 'ten_1',
  version: 3,
  occurredAt: '2026-01-02T03:04:05.678Z',
  correlationId: 'cor_1',
};

function moderated(data: Partial<Extract<DomainEvent, { type: 'RecordModerated' }>['data']>): DomainEvent {
  return recordModerated({ reasons: ['r'], rules: ['x'], userId: 'usr_1', ...data }, envelope);
}

function statusChanged(data: Partial<Extract<DomainEvent, { type: 'UserStatusChanged' }>['data']>): DomainEvent {
  return userStatusChanged({ via: 'Automation Flagged Record', ...data }, envelope);
}

describe('triggerOf', () => {
  it.each([
    ['Compliant → Flagged', moderated({ previousStatus: 'Compliant', status: 'Flagged' }), 'record.flagged', 'mod_1'],
    ['null → Flagged', moderated({ previousStatus: null, status: 'Flagged' }), 'record.flagged', 'mod_1'],
    ['Flagged → Compliant', moderated({ previousStatus: 'Flagged', status: 'Compliant' }), 'record.compliant', 'mod_1'],
    [
      'null → Compliant (as Iffy)',
      moderated({ previousStatus: null, status: 'Compliant' }),
      'record.compliant',
      'mod_1',
    ],
    ['user suspended', statusChanged({ status: 'Suspended' }), 'user.suspended', 'act_1'],
    ['user reinstated', statusChanged({ status: 'Compliant', previousStatus: 'Suspended' }), 'user.compliant', 'act_1'],
    ['user banned', statusChanged({ status: 'Banned' }), 'user.banned', 'act_1'],
  ])('%s emits %s with the body id %s', (_name, event, name, subjectId) => {
    const decision = triggerOf(event);
    expect(decision.kind).toBe('trigger');
    if (decision.kind !== 'trigger') return;
    expect(decision.trigger.event).toBe(name);
    expect(decision.trigger.subjectId).toBe(subjectId);
    expect(decision.trigger.tenantId).toBe('ten_1');
    expect(decision.trigger.version).toBe(3);
    expect(decision.trigger.at.toISOString()).toBe(envelope.occurredAt);
  });

  it.each<[string, DomainEvent]>([
    ['unchanged Flagged', moderated({ previousStatus: 'Flagged', status: 'Flagged' })],
    ['unchanged Compliant', moderated({ previousStatus: 'Compliant', status: 'Compliant' })],
    ['a suspension confirmed by hand', statusChanged({ previousStatus: 'Suspended', status: 'Suspended' })],
    [
      'record upserted',
      {
        ...envelope,
        stream: 'record-rec_1',
        type: 'RecordUpserted',
        data: { recordId: 'rec_1', clientId: 'c', entity: 'post', passthrough: false },
      },
    ],
  ])('%s emits nothing', (_name, event) => {
    expect(triggerOf(event)).toEqual({ kind: 'none' });
  });

  it.each([
    ['record in test mode', moderated({ testMode: true }), 'mod_1'],
    ['user in test mode', statusChanged({ testMode: true }), 'act_1'],
  ])('%s is skipped as test mode', (_name, event, subjectId) => {
    expect(triggerOf(event)).toEqual({ kind: 'test_mode', subjectId });
  });
});

describe('payloads and body', () => {
  const recordTrigger = (triggerOf(moderated({})) as { trigger: WebhookTrigger }).trigger as Extract<
    WebhookTrigger,
    { kind: 'record' }
  >;
  const userTrigger = (triggerOf(statusChanged({})) as { trigger: WebhookTrigger }).trigger as Extract<
    WebhookTrigger,
    { kind: 'user' }
  >;
  const record = {
    _id: 'rec_1',
    clientId: 'post-1',
    clientUrl: 'https://example.com/p/1',
    name: 'A post',
    entity: 'Post',
    protected: false,
    metadata: { a: '1' },
  };
  const user = {
    _id: 'usr_1',
    clientId: 'u-1',
    protected: true,
    status: 'Compliant' as const,
    statusUpdatedAt: new Date(1700000000000),
    email: 'never@example.com',
    name: 'Never',
  };
  const sentAt = new Date(1800000000000);

  it("writes a record event in Iffy's exact shape and key order", () => {
    const body = webhookBody(recordTrigger, recordPayload(recordTrigger, record, user), sentAt);
    expect(body).toBe(
      '{"event":"record.flagged","timestamp":"1800000000000","id":"mod_1","payload":{' +
        '"id":"rec_1","clientId":"post-1","clientUrl":"https://example.com/p/1","name":"A post","entity":"Post",' +
        '"protected":false,"metadata":{"a":"1"},"status":"Flagged","statusUpdatedAt":"1767323045678",' +
        '"statusUpdatedVia":"AI","user":{"id":"usr_1","clientId":"u-1","protected":true,"status":"Compliant",' +
        '"statusUpdatedAt":"1700000000000"}}}',
    );
  });

  it('writes the masked copy of the text after metadata when the moderation masked contact details', () => {
    const masked = { ...record, maskedContent: 'call [contact removed] now' };
    const body = webhookBody(recordTrigger, recordPayload(recordTrigger, masked, null), sentAt);
    expect(body).toContain('"metadata":{"a":"1"},"maskedContent":"call [contact removed] now","status":"Flagged"');
  });

  it('omits name for passthrough records and user when the record has none', () => {
    const passthrough = { ...record, name: undefined, clientUrl: undefined, metadata: undefined };
    const parsed = JSON.parse(webhookBody(recordTrigger, recordPayload(recordTrigger, passthrough, null), sentAt)) as {
      payload: Record<string, unknown>;
    };
    expect(Object.keys(parsed.payload)).toEqual([
      'id',
      'clientId',
      'entity',
      'protected',
      'status',
      'statusUpdatedAt',
      'statusUpdatedVia',
    ]);
  });

  it("writes a user event in Iffy's shape without email or name", () => {
    const body = webhookBody(userTrigger, userPayload(userTrigger, user), sentAt);
    expect(body).toBe(
      '{"event":"user.suspended","timestamp":"1800000000000","id":"act_1","payload":{' +
        '"id":"usr_1","clientId":"u-1","protected":true,"status":"Suspended","statusUpdatedAt":"1767323045678",' +
        '"statusUpdatedVia":"Automation Flagged Record"}}',
    );
  });
});

describe('report.decided', () => {
  const decided = (data: Partial<Extract<DomainEvent, { type: 'ReportDecided' }>['data']> = {}): DomainEvent =>
    reportDecided(
      {
        reporter: { type: 'user', id: 'reader-1' },
        outcome: 'Actioned',
        action: 'Flag',
        decisionId: 'mod_9',
        reason: 'a fake shop',
        actor: 'api_key:key_1',
        ...data,
      },
      envelope,
    );

  it('turns a decided report into report.decided, under the report id', () => {
    const decision = triggerOf(decided());
    expect(decision).toMatchObject({ kind: 'trigger', trigger: { kind: 'report', event: 'report.decided' } });
    expect((decision as { trigger: WebhookTrigger }).trigger.subjectId).toBe('rpt_1');
  });

  it('writes the report, its target, the reporter by id and the outcome; never the actor', () => {
    const trigger = (
      triggerOf(decided({ outcome: 'NoAction', action: undefined, reason: 'satire' })) as {
        trigger: Extract<WebhookTrigger, { kind: 'report' }>;
      }
    ).trigger;
    expect(webhookBody(trigger, reportPayload(trigger), new Date(1800000000000))).toBe(
      '{"event":"report.decided","timestamp":"1800000000000","id":"rpt_1","payload":{"id":"rpt_1",' +
        '"target":{"type":"record","id":"rec_1","clientId":"post-1"},"reporter":{"type":"user","id":"reader-1"},' +
        '"category":"STATEMENT_CATEGORY_SCAMS_AND_FRAUD","outcome":"NoAction","reason":"satire",' +
        '"decidedAt":"1767323045678"}}',
    );
  });

  it("never writes the reporter's hasEmail, and carries a complaint's decision with its statement", () => {
    const withEmail = triggerOf(decided({ reporter: { type: 'user', id: 'reader-1', hasEmail: true } })) as {
      trigger: Extract<WebhookTrigger, { kind: 'report' }>;
    };
    expect(reportPayload(withEmail.trigger).reporter).toEqual({ type: 'user', id: 'reader-1' });
    const complaint = triggerOf(
      reportComplaintDecided(
        { outcome: 'Upheld', action: 'Flag', decisionId: 'mod_3', reason: 'fake after all' },
        envelope,
      ),
    ) as { trigger: Extract<WebhookTrigger, { kind: 'report' }> };
    expect(complaint.trigger).toMatchObject({ event: 'report.complaint_decided', subjectId: 'rpt_1' });
    expect(reportPayload(complaint.trigger)).toMatchObject({
      id: 'rpt_1',
      reporter: { type: 'user', id: 'reader-1' },
      outcome: 'Upheld',
      complaint: { id: 'cmp_1', decisionId: 'mod_3' },
      statement: { kind: 'complaint', complaint: { outcome: 'Upheld' } },
    });
  });

  it('makes no webhook of a received report', () => {
    const received = reportReceived(
      {
        target: { type: 'user', id: 'usr_1', clientId: 'u-1' },
        category: 'STATEMENT_CATEGORY_VIOLENCE',
        explanation: 'threats',
      },
      envelope,
    );
    expect(triggerOf(received)).toEqual({ kind: 'none' });
  });
});

describe('rule.degraded', () => {
  const degraded: DomainEvent = {
    ...envelope,
    version: 1,
    stream: 'rule-ten_1-4-spam',
    type: 'RuleDegraded',
    data: {
      ruleId: 'spam',
      ruleSetVersion: 4,
      flags: 120,
      reviewed: 24,
      confirmed: 11,
      overturned: 13,
      overturnRate: 13 / 24,
      threshold: 0.5,
      minReviews: 20,
    },
  };

  it("writes the rule, its version's counts and the threshold, under the event's id, from the event alone", () => {
    const decision = triggerOf(degraded);
    expect(decision).toMatchObject({ kind: 'trigger', trigger: { kind: 'rule', event: 'rule.degraded' } });
    const trigger = (decision as { trigger: Extract<WebhookTrigger, { kind: 'rule' }> }).trigger;
    expect(webhookBody(trigger, rulePayload(trigger), new Date(1800000000000))).toBe(
      '{"event":"rule.degraded","timestamp":"1800000000000","id":"evt_01","payload":{"ruleId":"spam",' +
        '"ruleSetVersion":4,"flags":120,"reviewed":24,"confirmed":11,"overturned":13,' +
        `"overturnRate":${13 / 24},"threshold":0.5,"minReviews":20,"degradedAt":"1767323045678"}}`,
    );
  });
});

describe('hash.quarantined', () => {
  const quarantined: DomainEvent = {
    ...envelope,
    version: 2,
    stream: 'hash-ten_1-hsh_meme',
    type: 'HashQuarantined',
    data: {
      hashId: 'hsh_meme',
      bankId: 'bnk_1',
      bankName: 'Memes',
      kind: 'pdq',
      number: 2,
      threshold: 100,
      windowSeconds: 3600,
      count: 101,
    },
  };

  it("writes the hash by id, its bank, the threshold it passed and the count, under the event's id", () => {
    const decision = triggerOf(quarantined);
    expect(decision).toMatchObject({ kind: 'trigger', trigger: { kind: 'hash', event: 'hash.quarantined' } });
    const trigger = (decision as { trigger: Extract<WebhookTrigger, { kind: 'hash' }> }).trigger;
    expect(webhookBody(trigger, hashPayload(trigger), new Date(1800000000000))).toBe(
      '{"event":"hash.quarantined","timestamp":"1800000000000","id":"evt_01","payload":{"hashId":"hsh_meme",' +
        '"bank":{"id":"bnk_1","name":"Memes"},"kind":"pdq","quarantine":2,"threshold":100,"windowSeconds":3600,' +
        '"count":101,"quarantinedAt":"1767323045678"}}',
    );
  });

  it('reaches an endpoint that subscribed to it, or to every event, and no other', () => {
    expect(subscribes(['hash.quarantined'], 'hash.quarantined')).toBe(true);
    expect(subscribes([], 'hash.quarantined')).toBe(true);
    expect(subscribes(['record.flagged'], 'hash.quarantined')).toBe(false);
  });
});

describe('ids and subscriptions', () => {
  it('derives one webhook id per event and one delivery id per (event, endpoint)', () => {
    expect(webhookIdOf('evt_1')).toBe(webhookIdOf('evt_1'));
    expect(webhookIdOf('evt_1')).not.toBe(webhookIdOf('evt_2'));
    expect(webhookIdOf('evt_1')).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(deliveryIdOf('evt_1', 'we_a')).toBe(deliveryIdOf('evt_1', 'we_a'));
    expect(deliveryIdOf('evt_1', 'we_a')).not.toBe(deliveryIdOf('evt_1', 'we_b'));
    expect(deliveryIdOf('evt_1', 'we_a')).toMatch(/^dlv_[0-9a-f]{32}$/);
  });

  it.each([
    [[], 'record.flagged', true],
    [['record.flagged'], 'record.flagged', true],
    [['user.banned'], 'record.flagged', false],
  ] as const)('endpoint events %j subscribe to %s: %s', (events, name, expected) => {
    expect(subscribes(events, name)).toBe(expected);
  });
});
