/** The events one moderate call stages: the user's upsert, the record's upsert and its moderation, as they are stored. */
import type { BankSuspension } from '@vigil/proto';
import type { EngineResult } from '../engine';
import type { DecisionBasis } from '../domain/decision-basis';
import type { RecordInput, RecordState } from '../domain/record';
import { stageRecord, stageUser, type Loaded, type StageContext } from '../domain/stream';
import type { RecordBankSuspension, UserState } from '../domain/user';
import type { ModerateInput } from './moderate-input';
import { reconcileCommand } from './user-reconciliation';

/** The record's own fields of a moderation's input (without its tenant, user and call options). */
export function recordFieldsOf(input: ModerateInput): Omit<RecordInput, 'userId'> {
  return {
    clientId: input.clientId,
    clientUrl: input.clientUrl,
    name: input.name,
    entity: input.entity,
    content: input.content,
    metadata: input.metadata,
  };
}

/**
 * The events of one moderate call: the user's upsert (when a user came with the record), the record's upsert, and the
 * moderation when there is an outcome (passthrough records keep reasons without the matched text). The record's
 * stream comes last.
 */
export function stageModeration(
  input: ModerateInput,
  loaded: {
    record: Loaded<RecordState>;
    user: Loaded<UserState> | undefined;
    recordId: string;
    userId: string | undefined;
    moderationId: string;
    outcome: EngineResult | undefined;
    testMode: boolean;
    ruleSetVersion: number;
    /** What a flag's statement of reasons rests on. */
    basis?: DecisionBasis;
    /** The `flag_and_suspend` bank match of `outcome`, if any. */
    suspendsUser?: BankSuspension;
    /**
     * The user's flagged count once this moderation is stored, and a flagged record of theirs by a `flag_and_suspend`
     * bank: the user's decision is staged with them.
     */
    reconcile?: { flaggedCount: number; threshold: number; bank?: RecordBankSuspension };
  },
  context: StageContext,
): Loaded<RecordState | UserState>[] {
  const { record, user, recordId, userId, moderationId, outcome, testMode, ruleSetVersion, reconcile, basis } = loaded;
  const { suspendsUser } = loaded;
  let stagedUser =
    user && input.user && userId
      ? stageUser(
          user,
          { type: 'UpsertUser', userId, input: input.user, passthrough: input.passthrough, at: ['user'] },
          context,
        )
      : undefined;
  const userBefore = stagedUser ?? user;
  if (reconcile && userBefore?.state) {
    stagedUser = {
      ...stageUser(
        userBefore,
        reconcileCommand(
          reconcile.flaggedCount,
          reconcile.threshold,
          recordId,
          outcome?.rules.length ? { rules: outcome.rules, ruleSetVersion } : undefined,
          reconcile.bank,
        ),
        context,
      ),
      flaggedCount: reconcile.flaggedCount,
    };
  }
  const upserted = stageRecord(
    record,
    {
      type: 'UpsertRecord',
      recordId,
      input: { ...recordFieldsOf(input), userId },
      passthrough: input.passthrough,
      commandId: input.commandId,
      endsCommand: !outcome,
    },
    context,
  );
  const staged = outcome
    ? withMaskedContent(
        stageRecord(
          upserted,
          {
            type: 'ModerateRecord',
            moderationId,
            outcome: storedOutcome(outcome, input.passthrough),
            testMode,
            commandId: input.commandId,
            ruleSetVersion,
            basis,
            ...(suspendsUser ? { suspendsUser } : {}),
          },
          context,
          // The user as this commit leaves it goes into the webhook's view.
          stagedUser?.state ?? user?.state,
        ),
        moderationId,
        input.passthrough ? undefined : outcome.maskedText,
      )
    : upserted;
  return [...(stagedUser ? [stagedUser] : []), staged];
}

/**
 * The moderation's webhook view with the masked copy of the text (see WebhookRecordView.maskedContent), so that the
 * webhook carries it as the answer does. `masked` is undefined for a passthrough record: its view never holds content.
 */
function withMaskedContent<S extends Loaded<RecordState>>(staged: S, moderationId: string, masked?: string): S {
  if (masked === undefined) return staged;
  const events = staged.events.map((event) =>
    event.type === 'RecordModerated' && event.data.moderationId === moderationId && event.data.view
      ? { ...event, data: { ...event.data, view: { ...event.data.view, maskedContent: masked } } }
      : event,
  );
  return { ...staged, events };
}

/**
 * What a moderation keeps of the engine's result: never the masked text (it is the record's content, which a
 * passthrough record must not leave behind and a stored one already holds), and for a passthrough record the reasons
 * without their details and the images without the text read in them.
 */
function storedOutcome(outcome: EngineResult, passthrough: boolean): EngineResult {
  const kept: EngineResult = { ...outcome };
  delete kept.maskedText;
  if (passthrough) {
    kept.reasons = withoutDetails(kept.reasons);
    // The image's hashes stand for its content: a passthrough record leaves none behind (its matches name banks).
    delete kept.imageHashes;
    if (kept.images) {
      kept.images = kept.images.map((image) => {
        const copy = { ...image };
        delete copy.text;
        return copy;
      });
    }
  }
  return kept;
}

/**
 * Reasons without the matched text after `: ` (blocked word, pattern, domain): stored for passthrough records, whose
 * content must leave no trace, not even the word that matched.
 */
function withoutDetails(reasons: string[]): string[] {
  return [...new Set(reasons.map((reason) => reason.split(': ')[0] ?? reason))];
}
