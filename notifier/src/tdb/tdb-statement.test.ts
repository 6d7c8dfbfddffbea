import { statementOf, TdbSettings, type DomainEvent, type GroundedStatement } from '@vigil/proto';
import { recordModerated, reportComplaintDecided, userStatusChanged } from '../../../deploy/test-support/events';
import { validateStatement } from '../../../deploy/test-support/tdb';
import { scrubPersonalData, submitsToTdb, tdbStatementOf } from './tdb-statement';

const at = '2026-03-01T10:00:00.000Z';
const envelope = { tenantId: 'ten_a', version: 2, occurredAt: at, correlationId: 'c' };
const settings = TdbSettings.parse({ baseUrl: 'https://tdb.example', territorialScope: ['DE', 'AT'] });
/** The statement of an event the database receives one for. */
const submitted = (event: DomainEvent): GroundedStatement => {
  const statement = statementOf(event, { appealWindowDays: 183 });
  if (!statement || !submitsToTdb(statement)) throw new Error(`no statement of ${event.type} is submitted`);
  return statement;
};

const flagged: DomainEvent = recordModerated(
  {
    via: 'Manual',
    reasons: ['wrote to jane.doe@example.com, see https://evil.example/x and call +49 170 1234567, cc @janedoe'],
    userId: 'usr_1',
    grounds: {
      policyId: 'fraud',
      name: 'Fraud',
      ground: 'ILLEGAL_CONTENT',
      legalGround: 'Penal code §263',
      category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
      explanation: 'Scams are illegal.',
      referenceUrl: 'https://law.example/263',
    },
  },
  { ...envelope, id: '01JEVENT0000000000000000AA' },
);

const banned: DomainEvent = userStatusChanged(
  { status: 'Banned', previousStatus: 'Suspended', reason: 'repeated scams', payouts: true },
  { ...envelope, id: '01JEVENT0000000000000000BB' },
);

describe('Transparency Database statements', () => {
  it('builds statements the database accepts, for a flag and for a ban with payouts', () => {
    for (const event of [flagged, banned]) {
      const payload = tdbStatementOf(submitted(event), settings, { hasImages: true });
      expect(validateStatement(payload)).toEqual({});
      expect(payload.puid).toBe(event.id);
      expect(payload.territorial_scope).toEqual(['DE', 'AT']);
      expect(payload.content_type).toEqual(['CONTENT_TYPE_TEXT', 'CONTENT_TYPE_IMAGE']);
      expect(payload.application_date).toBe('2026-03-01');
    }
  });

  it("submits restrictions only: not a lifted restriction, nor a complaint's decision, rejected or upheld", () => {
    const complaint = (outcome: 'Upheld' | 'Rejected'): DomainEvent =>
      reportComplaintDecided(
        {
          reporter: { type: 'user', id: 'reader-1', hasEmail: false },
          outcome,
          ...(outcome === 'Upheld' ? { action: 'Flag', decisionId: 'mod_9' } : {}),
          reason: 'checked again',
        },
        { ...envelope, id: `01JEVENT0000000000000000C${outcome === 'Upheld' ? 'U' : 'R'}` },
      );

    const lifted: DomainEvent = {
      ...banned,
      id: '01JEVENT0000000000000000LL',
      data: { ...(banned.data as object), status: 'Compliant', previousStatus: 'Banned' },
    } as DomainEvent;
    for (const event of [complaint('Rejected'), complaint('Upheld'), lifted]) {
      const statement = statementOf(event, { appealWindowDays: 183 })!;
      expect(statement).not.toBeNull();
      expect(submitsToTdb(statement)).toBe(false);
    }
    expect(submitsToTdb(submitted(flagged))).toBe(true);
  });

  it('maps grounds, restrictions and automation onto the database fields', () => {
    const flag = tdbStatementOf(submitted(flagged), settings);
    expect(flag).toMatchObject({
      decision_visibility: ['DECISION_VISIBILITY_CONTENT_DISABLED'],
      decision_ground: 'DECISION_GROUND_ILLEGAL_CONTENT',
      illegal_content_legal_ground: 'Penal code §263',
      illegal_content_explanation: 'Scams are illegal.',
      decision_ground_reference_url: 'https://law.example/263',
      category: 'STATEMENT_CATEGORY_SCAMS_AND_FRAUD',
      source_type: 'SOURCE_VOLUNTARY',
      automated_detection: 'No',
      automated_decision: 'AUTOMATED_DECISION_NOT_AUTOMATED',
    });
    const ban = tdbStatementOf(submitted(banned), settings);
    expect(ban).toMatchObject({
      decision_account: 'DECISION_ACCOUNT_TERMINATED',
      decision_monetary: 'DECISION_MONETARY_TERMINATION',
      decision_ground: 'DECISION_GROUND_INCOMPATIBLE_CONTENT',
      incompatible_content_ground: 'Terms of service',
    });
    expect(ban.decision_visibility).toBeUndefined();
  });

  it('leaves emails, links, handles and long numbers out of the facts', () => {
    const payload = tdbStatementOf(submitted(flagged), settings);
    const text = JSON.stringify(payload);
    for (const personal of ['jane.doe', 'example.com', 'evil.example', '1234567', '@janedoe']) {
      expect(text).not.toContain(personal);
    }
    expect(payload.decision_facts).toContain('[email]');
    expect(payload.decision_facts).toContain('[link]');
  });

  it.each([
    ['mail me at a.b@c.de now', 'mail me at [email] now'],
    ['see www.example.org/page', 'see [link]'],
    ['ping @someone please', 'ping [handle] please'],
    ['IBAN 1234 5678 9012', 'IBAN [number]'],
    ['rule spam-1 matched twice', 'rule spam-1 matched twice'],
  ])('scrubs %j', (input, output) => {
    expect(scrubPersonalData(input)).toBe(output);
  });

  it('refuses an address the URL parser cannot read as an issue, without throwing', () => {
    const result = TdbSettings.safeParse({ baseUrl: 'é'.repeat(300), territorialScope: ['EE'] });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toContain('baseUrl');
  });

  it('refuses settings without a country or with CONTENT_TYPE_OTHER unexplained', () => {
    expect(TdbSettings.safeParse({ baseUrl: 'https://tdb.example', territorialScope: [] }).success).toBe(false);
    expect(TdbSettings.safeParse({ baseUrl: 'https://tdb.example', territorialScope: ['US'] }).success).toBe(false);
    expect(
      TdbSettings.safeParse({
        baseUrl: 'https://tdb.example',
        territorialScope: ['DE'],
        defaults: { contentType: ['CONTENT_TYPE_OTHER'] },
      }).success,
    ).toBe(false);
  });
});

describe('the local database refuses what the real one refuses', () => {
  const good = tdbStatementOf(submitted(banned), settings);
  it.each<[string, Record<string, unknown>, string]>([
    ['no decision', { decision_account: undefined, decision_monetary: undefined }, 'decision_visibility'],
    ['an unknown category', { category: 'STATEMENT_CATEGORY_SPAM' }, 'category'],
    ['facts over 5,000 characters', { decision_facts: 'x'.repeat(5001) }, 'decision_facts'],
    ['a puid with a dot', { puid: 'evt.1' }, 'puid'],
    ['a country outside the EEA', { territorial_scope: ['US'] }, 'territorial_scope'],
    ['automated_detection as a boolean', { automated_detection: true }, 'automated_detection'],
    ['a date with a time', { application_date: '2026-03-01T10:00:00Z' }, 'application_date'],
    ['no incompatible ground', { incompatible_content_ground: undefined }, 'incompatible_content_ground'],
  ])('%s', (_name, change, field) => {
    const errors = validateStatement(JSON.parse(JSON.stringify({ ...good, ...change })));
    expect(Object.keys(errors)).toContain(field);
  });
});
