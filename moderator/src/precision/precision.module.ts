import type { DomainEvent, DomainEventType } from '@vigil/proto';
import type { ShadowVerdictDoc } from './shadow-verdicts';
import { untilDone } from '@vigil/proto/platform';
import type { OutboxSignal } from '../service/outbox-signal';
import type { ReactingModule, SharedParts } from '../shared-parts';
import { splitRules } from '../shadow/shadow-rules';
import type { TenantConfigCache } from '../store/tenant-config';
import { thresholdOf } from './precision-counts';
import { RulePrecision } from './rule-precision';

/** Automatic moderations flag rules; people's decisions on records, users and appeals review them. */
export const PRECISION_EVENTS = [
  'RecordModerated',
  'UserStatusChanged',
  'AppealDecided',
] as const satisfies readonly DomainEventType[];

export interface PrecisionModule extends ReactingModule {
  precision: RulePrecision;
}

/**
 * Each rule's flags and human reviews (`rule_precision`), counted after each commit, and the `RuleDegraded` event of
 * a rule people overturn too often. Reads no variable of its own: thresholds are the tenants' settings.
 */
export async function precisionModule(
  { log, db, registry }: SharedParts,
  deps: {
    tenants: TenantConfigCache;
    /** Appends events of a stream without a projection (RuleDegraded). */
    append: (events: DomainEvent[]) => Promise<number>;
    outbox: OutboxSignal;
    /** The last shadow judgement of a record (the shadow runner's, built after this module). */
    verdictOf: (recordId: string) => Promise<ShadowVerdictDoc | null>;
  },
): Promise<PrecisionModule> {
  const { tenants } = deps;
  const precision = new RulePrecision({
    db,
    log: log.child({ component: 'rule-precision' }),
    thresholdOf: async (tenantId) => thresholdOf((await tenants.get(tenantId)).settings),
    append: deps.append,
    outbox: deps.outbox,
    registry,
    verdictOf: deps.verdictOf,
    hasShadow: async (tenantId) => {
      const config = await tenants.get(tenantId);
      return splitRules(config.rules).shadow !== null || config.shadowVersion !== undefined;
    },
  });
  await untilDone(log, 'rule precision indexes', () => precision.ensureIndexes());
  return {
    name: 'rule-precision',
    precision,
    reactions: [
      {
        name: 'rule-precision',
        applicableEvents: PRECISION_EVENTS,
        react: (events) => precision.count(events),
      },
    ],
  };
}
