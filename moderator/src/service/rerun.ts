import { recordIdFor } from '@vigil/proto';
import { withoutAi } from '../backtest/backtest-runner';
import type { RecordState } from '../domain/record';
import { stageRecord, type StageContext } from '../domain/stream';
import { bankSuspensionOf, ruleBasis } from '../domain/decision-basis';
import { splitRules } from '../shadow/shadow-rules';
import { finishAppliedCommand } from './applied-command';
import { judge, priorOf } from './judge';
import type { ModerationDeps } from './moderate';

/** How a retroaction re-runs a record (see `retroact`). */
export interface RetroactOptions {
  /** The rule set version that must be live: the record is judged by it, and by no other. */
  version: number;
  /** Judge without AI-provider strategies (its backtest did not run them on every record). */
  withoutAi: boolean;
  /** The tenant the engine's fairness counts the work under (a tenant of its own: live work keeps its threads). */
  engineTenantId: string;
}

/** What re-running one record did. */
export type RerunOutcome =
  | 'gone' // missing, deleted or passthrough: nothing to judge
  | 'manual' // a human decided it: left as it is (retroaction only)
  | 'unchanged' // judged as it stands: nothing written (retroaction only)
  | 'toFlagged'
  | 'toCompliant'
  | 'recorded' // a bulk re-run's moderation, whatever its status
  | 'version_replaced'; // another version is live now (retroaction only)

/**
 * Bulk re-run (Iffy's "Re-run moderation"): moderates the stored record again with the tenant's current rules.
 * Returns false, storing nothing, when there is nothing to judge: the record is gone, deleted or passthrough (its
 * content was never kept).
 */
export async function rerunModeration(
  deps: ModerationDeps,
  input: { tenantId: string; clientId: string; moderationId: string; correlationId: string; commandId: string },
): Promise<boolean> {
  return (await rerunRecord(deps, { ...input, recordId: recordIdFor(input.tenantId, input.clientId) })) !== 'gone';
}

/**
 * Retroaction (docs/rules-safely.md, "Apply"): the re-run of one record by the live version `options.version`, written
 * only when its status changes, and never over a human decision. A command id applied before answers with the
 * direction it took, so a resumed job counts a record once and writes it once.
 */
export function retroact(
  deps: ModerationDeps,
  input: { tenantId: string; recordId: string; moderationId: string; correlationId: string; commandId: string },
  options: RetroactOptions,
): Promise<RerunOutcome> {
  return rerunRecord(deps, input, options);
}

async function rerunRecord(
  deps: ModerationDeps,
  input: { tenantId: string; recordId: string; moderationId: string; correlationId: string; commandId: string },
  retro?: RetroactOptions,
): Promise<RerunOutcome> {
  const { store, writer } = deps;
  const { recordId } = input;
  const { settings, rules, rulesVersion } = await deps.tenants.get(input.tenantId);
  if (retro && rulesVersion !== retro.version) return 'version_replaced';
  const context: StageContext = { tenantId: input.tenantId, correlationId: input.correlationId };
  return writer.retrying(async (fresh): Promise<RerunOutcome> => {
    // Load.
    const record = await store.streams.loadRecord(recordId, fresh);
    const before = record.state;
    if (!before || before.tenantId !== input.tenantId || before.deleted || before.passthrough || !before.content)
      return 'gone';
    if (before.recentCommands.includes(input.commandId)) {
      const applied = await finishAppliedCommand(deps, context, settings, { recordId }, fresh ? { record } : undefined);
      if (!retro) return 'recorded';
      return applied?.status === 'Flagged' ? 'toFlagged' : 'toCompliant';
    }
    if (retro && before.manual) return 'manual';

    // Decide.
    const live = splitRules(rules).live;
    const outcome = await judge(
      deps.engine,
      {
        tenantId: retro?.engineTenantId ?? input.tenantId,
        correlationId: input.correlationId,
        clientId: before.clientId,
        name: before.name ?? '',
        entity: before.entity,
        content: before.content,
        passthrough: false,
      },
      before.metadata,
      retro?.withoutAi ? withoutAi(live) : live,
      priorOf(before),
      recordId,
    );
    const current = before.status ?? 'Compliant';
    if (retro && outcome.status === current) return 'unchanged';
    const staged = stageRecord(
      record,
      {
        type: 'ModerateRecord',
        moderationId: input.moderationId,
        outcome,
        testMode: settings.testMode,
        commandId: input.commandId,
        ruleSetVersion: rulesVersion,
        basis: ruleBasis(settings, rules, outcome.rules),
        suspendsUser: bankSuspensionOf(settings, outcome.hashMatches),
      },
      context,
    );

    // Commit.
    await writer.commit(staged);
    await deps.users.afterRecordChange(context, before, staged.state as RecordState, recordId, settings);
    if (!retro) return 'recorded';
    return outcome.status === 'Flagged' ? 'toFlagged' : 'toCompliant';
  });
}
