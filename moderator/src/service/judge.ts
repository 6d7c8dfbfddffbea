import { ProviderError, type EngineResult, type ModerationEngine, type PriorDecision } from '../engine';
import { UnavailableError } from '../domain/errors';
import type { Metadata } from '../domain/metadata';
import type { RecordState } from '../domain/record';
import type { RuleSet } from '@vigil/proto/rules';
import type { ModerateInput } from './moderate-input';

// Running the engine on a record, shared by the moderate use case (moderate.ts) and the re-run (rerun.ts).

/** The human decision standing on a record, which prompt strategies tell the LLM about. */
export function priorOf(state: RecordState | null): PriorDecision | undefined {
  return state?.manual && state.status ? { status: state.status, reason: state.manualReason } : undefined;
}

/** Runs the engine; a provider failure becomes UnavailableError (a busy tenant's TenantBusyError is one already). */
export async function judge(
  engine: ModerationEngine,
  input: ModerateInput,
  metadata: Metadata | undefined,
  rules: RuleSet,
  prior: PriorDecision | undefined,
  recordId?: string,
): Promise<EngineResult> {
  try {
    return await engine.moderate(
      {
        entity: input.entity,
        name: input.name,
        text: input.content.text,
        imageUrls: input.content.imageUrls,
        externalUrls: input.content.externalUrls,
        metadata,
        tenantId: input.tenantId,
        ...(recordId ? { recordId } : {}),
        prior,
        deadline: input.deadline,
      },
      rules,
      input.signal,
    );
  } catch (err) {
    // A provider that fails, even "permanently" (bad key), is an operator problem: callers retry, nothing is dropped.
    if (err instanceof ProviderError)
      throw new UnavailableError('moderation provider unavailable', { retriable: err.retriable }, { cause: err });
    throw err;
  }
}
