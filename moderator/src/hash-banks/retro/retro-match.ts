import { hashReason } from '../bank-rules';
import { bankSuspensionOf, ruleBasis } from '../../domain/decision-basis';
import type { RecordState } from '../../domain/record';
import { stageRecord, type StageContext } from '../../domain/stream';
import { finishAppliedCommand } from '../../service/applied-command';
import type { ModerationDeps } from '../../service/moderate';
import type { BankMatcher } from '../../engine/types';

/** What a pass did to one candidate record. */
export type RetroOutcome =
  | 'flagged' // a moderation event naming the bank was written (or had been, by an earlier attempt of the pass)
  | 'heldByHumans' // a person decided the record: left as it is
  | 'unchanged' // no acting match now (cancelled, disabled, withdrawn), or the record already carries it
  | 'gone'; // missing, deleted, passthrough, or without image hashes

export interface RetroMatchInput {
  tenantId: string;
  recordId: string;
  /** The pass: its id is the events' correlation id, and `<passId>:<recordId>` the command id (written once). */
  passId: string;
  /** The pass's hashes: only their matches act (the record's other matches were acted on when it was moderated). */
  hashIds: ReadonlySet<string>;
  moderationId: string;
}

/**
 * Acts on a bank hash that a stored record's images match, through the ordinary moderation path: the record's stream
 * is loaded, its stored `imageHashes` matched again in the tenant's live index (so a negative bank, a disabled or
 * withdrawn hash, or the bank's distance count as they do now), and a new automatic moderation is committed that keeps
 * the record's standing reasons and adds one naming the bank. So the `record.flagged` webhook, the statement of reasons
 * (the bank's policy) and a `flag_and_suspend` suspension follow as they do live. A record a person decided is never
 * touched, and a pass never lifts a flag.
 */
export async function retroMatch(
  deps: Pick<ModerationDeps, 'store' | 'tenants' | 'writer' | 'users'>,
  matcher: Pick<BankMatcher, 'match'>,
  input: RetroMatchInput,
): Promise<RetroOutcome> {
  const { store, writer } = deps;
  const { tenantId, recordId } = input;
  const commandId = `${input.passId}:${recordId}`;
  const { settings, rules, rulesVersion } = await deps.tenants.get(tenantId);
  const context: StageContext = { tenantId, correlationId: input.passId };
  return writer.retrying(async (fresh): Promise<RetroOutcome> => {
    const record = await store.streams.loadRecord(recordId, fresh);
    const before = record.state;
    if (!before || before.tenantId !== tenantId || before.deleted || before.passthrough || !before.imageHashes?.length)
      return 'gone';
    if (before.recentCommands.includes(commandId)) {
      await finishAppliedCommand(deps, context, settings, { recordId }, fresh ? { record } : undefined);
      return 'flagged';
    }
    if (before.manual) return 'heldByHumans';

    const all = await matcher.match(tenantId, before.imageHashes);
    const acting = all.filter((match) => match.cancelledBy === undefined && input.hashIds.has(match.hashId));
    const added = acting.filter((match) => !before.reasons.includes(hashReason(match)));
    if (added.length === 0) return 'unchanged';

    const wasFlagged = before.status === 'Flagged';
    const standingRules = wasFlagged ? before.rules : [];
    const staged = stageRecord(
      record,
      {
        type: 'ModerateRecord',
        moderationId: input.moderationId,
        outcome: {
          status: 'Flagged',
          reasons: [...(wasFlagged ? before.reasons : []), ...added.map(hashReason)],
          rules: standingRules,
          hashMatches: added,
        },
        testMode: settings.testMode,
        commandId,
        // The standing flag's rules keep their version; a record flagged by the bank alone takes the live one.
        ruleSetVersion: wasFlagged && before.ruleSetVersion !== undefined ? before.ruleSetVersion : rulesVersion,
        basis: ruleBasis(settings, rules, standingRules, added.find((match) => match.policyId)?.policyId),
        // A suspending flag the record carries already stands beside a match that only flags.
        suspendsUser: bankSuspensionOf(settings, added) ?? (wasFlagged ? before.suspendsUser : undefined),
      },
      context,
    );
    await writer.commit(staged);
    await deps.users.afterRecordChange(context, before, staged.state as RecordState, recordId, settings);
    return 'flagged';
  });
}
