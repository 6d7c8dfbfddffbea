import { ulid, type HashMatchRecord } from '@vigil/proto';
import { hashReason } from '../bank-rules';
import { bankSuspensionOf, ruleBasis } from '../../domain/decision-basis';
import type { ModerationOutcome, RecordState } from '../../domain/record';
import { stageRecord, type StageContext } from '../../domain/stream';
import { finishAppliedCommand } from '../../service/applied-command';
import type { ModerationDeps } from '../../service/moderate';

/** What applying one held match did. */
export type HeldOutcome = 'applied' | 'gone' | 'manual';

/**
 * Applies a released hash's held match to its record as an automatic moderation (`via: AI`), through the same path as
 * any other: the record's flag, its webhook, the statement of reasons on the bank's policy and, for a
 * `flag_and_suspend` bank, the user's suspension. Never over a person: a record whose status a person set is left as
 * it is. The record's standing flag (its rules and reasons) is kept beside the match. `commandId` makes a retried
 * release apply it once.
 */
export async function applyHeldMatch(
  deps: Pick<ModerationDeps, 'store' | 'tenants' | 'writer' | 'users'>,
  input: { tenantId: string; recordId: string; match: HashMatchRecord; commandId: string },
): Promise<HeldOutcome> {
  const { store, writer } = deps;
  const { tenantId, recordId, commandId } = input;
  const { settings, rules } = await deps.tenants.get(tenantId);
  const context: StageContext = { tenantId, correlationId: commandId };
  const match: HashMatchRecord = { ...input.match };
  delete match.quarantined;
  return writer.retrying(async (fresh): Promise<HeldOutcome> => {
    const record = await store.streams.loadRecord(recordId, fresh);
    const before = record.state;
    if (!before || before.tenantId !== tenantId || before.deleted) return 'gone';
    if (before.recentCommands.includes(commandId)) {
      await finishAppliedCommand(deps, context, settings, { recordId }, fresh ? { record } : undefined);
      return 'applied';
    }
    if (before.manual) return 'manual';
    const flagged = before.status === 'Flagged';
    const outcome: ModerationOutcome = {
      status: 'Flagged',
      reasons: [...new Set([...(flagged ? before.reasons : []), hashReason(match)])],
      rules: flagged ? before.rules : [],
      ...(before.imageHashes?.length ? { imageHashes: before.imageHashes } : {}),
      hashMatches: [match],
    };
    const staged = stageRecord(
      record,
      {
        type: 'ModerateRecord',
        moderationId: `mod_${ulid()}`,
        outcome,
        testMode: settings.testMode,
        commandId,
        ...(before.ruleSetVersion !== undefined ? { ruleSetVersion: before.ruleSetVersion } : {}),
        basis: ruleBasis(settings, rules, outcome.rules, match.policyId),
        // A standing suspension by another bank's flag stays with the record.
        suspendsUser: bankSuspensionOf(settings, [match]) ?? before.suspendsUser,
      },
      context,
    );
    await writer.commit(staged);
    await deps.users.afterRecordChange(context, before, staged.state as RecordState, recordId, settings);
    return 'applied';
  });
}
