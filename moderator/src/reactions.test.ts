import { DomainEvent, transparencyCountsOf, type DomainEventType } from '@vigil/proto';
import { countsOf } from './precision/precision-counts';
import { PRECISION_EVENTS } from './precision/precision.module';
import { TRANSPARENCY_EVENTS } from './transparency/transparency.module';

/** Every event type the moderator commits, from the events' schema. */
const ALL_TYPES: DomainEventType[] = DomainEvent.options.map((option) => option.shape.type.value);

/**
 * An event of `type` whose data holds every field a counter might read, set so that it would count if its type did:
 * a flag by a rule, a person's review, a status change to a restriction.
 */
function eventOf(type: DomainEventType): DomainEvent {
  return {
    id: `evt_${type}`,
    tenantId: 'ten_1',
    stream: 'record-rec_1',
    version: 2,
    occurredAt: '2026-01-02T03:04:05.000Z',
    correlationId: 'c',
    type,
    data: {
      recordId: 'rec_1',
      userId: 'usr_1',
      appealId: 'apl_01JC0000000000000000000000',
      reportId: 'rpt_01JC0000000000000000000000',
      complaintId: 'cpl_01JC0000000000000000000000',
      status: 'Flagged',
      previousStatus: 'Compliant',
      via: 'Automation',
      rules: ['blocklist'],
      reasons: ['r'],
      review: { rules: ['blocklist'], ruleSetVersion: 1, outcome: 'overturned' },
      ruleId: 'blocklist',
    },
  } as unknown as DomainEvent;
}

describe('after-commit reactions', () => {
  const others = (declared: readonly string[]) => ALL_TYPES.filter((type) => !declared.includes(type));

  it.each(others(PRECISION_EVENTS))('rule precision counts nothing of a %s event, which it does not read', (type) => {
    expect(countsOf([eventOf(type)])).toEqual([]);
  });

  it.each(others(TRANSPARENCY_EVENTS))(
    'the transparency counters count nothing of a %s event, which they do not read',
    (type) => {
      expect(transparencyCountsOf(eventOf(type))).toEqual([]);
    },
  );

  it('declare event types the events schema knows', () => {
    for (const type of [...PRECISION_EVENTS, ...TRANSPARENCY_EVENTS]) expect(ALL_TYPES).toContain(type);
  });

  it('would count the declared RecordModerated flag (the probe event counts where its type is read)', () => {
    expect(countsOf([eventOf('RecordModerated')])).not.toEqual([]);
    expect(transparencyCountsOf(eventOf('RecordModerated'))).not.toEqual([]);
  });
});
