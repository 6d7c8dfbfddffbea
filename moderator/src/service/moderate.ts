import { ruleBasis, type DecisionBasis } from '../domain/decision-basis';
import {
  recordIdFor,
  ulid,
  userIdFor,
  type ContentData,
  type RecordStatus,
  type RuleSet,
  type UserData,
} from '@vigil/proto';
import { ProviderError, type EngineResult, type ModerationEngine, type PriorDecision } from '../engine';
import { checkRecordBounds } from '../domain/bounds';
import { UnavailableError } from '../domain/errors';
import { mergeMetadata, validateMetadata, type Metadata } from '../domain/metadata';
import type { RecordState } from '../domain/record';
import { stageRecord, stageUser, type Loaded, type StageContext } from '../domain/stream';
import type { UserState } from '../domain/user';
import type { EventStore } from '../store/event-store';
import type { TenantConfig, TenantConfigCache } from '../store/tenant-config';
import type { ShadowRunner } from '../shadow/shadow-runner';
import { shadowVersionRules, splitRules } from '../shadow/shadow-rules';
import { withoutAi } from '../backtest/backtest-runner';
import type { JudgementCarry, Judgement } from './judgement-carry';
import type { StreamWriter } from './stream-writer';
import { countBeforeCommit, reconcileCommand, type UserReconciliation } from './user-reconciliation';

export interface ModerateInput {
  tenantId: string;
  correlationId: string;
  clientId: string;
  clientUrl?: string;
  name: string;
  entity: string;
  content: ContentData;
  metadata?: Metadata;
  user?: UserData;
  passthrough: boolean;
  /** Set for ingest commands: a command id is applied once. */
  commandId?: string;
  /**
   * Ingest roll-out (Iffy §4.8): false when the sampling skipped the record, which is then stored and moderated only
   * if it is Flagged or its user Suspended. Default true.
   */
  sampled?: boolean;
  /** Id for the moderation (the gateway's, so its answer names it); a fresh one by default. */
  moderationId?: string;
  /** The caller stopped waiting (gRPC deadline): the engine drops checks still queued for this record. */
  signal?: AbortSignal;
  /** When the caller stops waiting (epoch milliseconds): images are fetched and judged in time for the answer. */
  deadline?: number;
}

export interface ModerateResult {
  recordId: string;
  status: RecordStatus;
  moderationId: string;
  userId?: string;
  flagged: boolean;
  reasons: string[];
  rules: string[];
  testMode: boolean;
  /** The rule set version of the record's last automatic moderation (0: the default set, or none recorded). */
  ruleSetVersion: number;
  /** The command had been applied before; nothing new was stored. */
  duplicate: boolean;
  /** Stored without a moderation (roll-out sampling). */
  skipped?: boolean;
}

/** What the moderation use cases work with. */
export interface ModerationDeps {
  store: EventStore;
  engine: ModerationEngine;
  tenants: TenantConfigCache;
  writer: StreamWriter;
  users: UserReconciliation;
  /** Judgements of commands whose commit failed, for their retries. */
  carry?: JudgementCarry;
  /** Runs the tenant's shadow rules after a moderation is committed (docs/rules-safely.md, "Shadow rules"). */
  shadow?: ShadowRunner;
}

/** Hands the record to the shadow rules, when the rule set has any: the moderation does not wait for them. */
function offerShadow(
  deps: ModerationDeps,
  input: ModerateInput,
  config: Pick<TenantConfig, 'rules' | 'rulesVersion' | 'shadowVersion'>,
  recordId: string,
  metadata: Metadata | undefined,
  liveFlagged: boolean,
): void {
  if (!deps.shadow) return;
  const shadow = splitRules(config.rules).shadow;
  const versionRules = config.shadowVersion && shadowVersionRules(config.shadowVersion.rules);
  if (!shadow && !versionRules) return;
  deps.shadow.offer({
    tenantId: input.tenantId,
    recordId,
    ruleSetVersion: config.rulesVersion,
    shadow,
    ...(versionRules && config.shadowVersion
      ? { version: { ruleSetVersion: config.shadowVersion.version, shadow: versionRules } }
      : {}),
    input: {
      entity: input.entity,
      name: input.name,
      text: input.content.text,
      externalUrls: input.content.externalUrls,
      metadata,
      tenantId: input.tenantId,
    },
    liveFlagged,
  });
}

/**
 * Reasons without the matched text after `: ` (blocked word, pattern, domain): stored for passthrough records, whose
 * content must leave no trace, not even the word that matched.
 */
export function withoutDetails(reasons: string[]): string[] {
  return [...new Set(reasons.map((reason) => reason.split(': ')[0] ?? reason))];
}

/**
 * Upserts the user and the record, runs the engine on name, text and the merged metadata, and stores the result.
 * Every call moderates again, ingest included (no content hash: a changed rule set must apply to re-sent content).
 */
export async function moderate(deps: ModerationDeps, input: ModerateInput): Promise<ModerateResult> {
  checkRecordBounds({
    clientId: input.clientId,
    clientUrl: input.clientUrl,
    name: input.name,
    entity: input.entity,
    content: input.content,
    metadata: input.metadata,
    user: input.user,
  });
  if (input.metadata) validateMetadata(input.metadata, ['metadata']);
  if (input.user?.metadata) validateMetadata(input.user.metadata, ['user', 'metadata']);
  const { store, writer, users } = deps;
  const recordId = recordIdFor(input.tenantId, input.clientId);
  const userId = input.user ? userIdFor(input.tenantId, input.user.clientId) : undefined;
  const config = await deps.tenants.get(input.tenantId);
  const { settings, rules, rulesVersion } = config;
  const testMode = settings.testMode;
  const moderationId = input.moderationId ?? `mod_${ulid()}`;
  // A retry of an ingest command whose earlier attempt was judged and then failed starts from that judgement.
  let judged: Judgement | undefined = input.commandId ? deps.carry?.take(input.commandId) : undefined;

  const context: StageContext = { tenantId: input.tenantId, correlationId: input.correlationId };
  try {
    return await writer.retrying(async (fresh) => {
      // Load.
      const [record, user] = await Promise.all([
        store.loadRecord(recordId, fresh),
        userId ? store.loadUser(userId, fresh) : Promise.resolve(undefined),
      ]);
      const before = record.state;

      if (input.commandId && before?.recentCommands.includes(input.commandId)) {
        // Applied before: only what a crash may have left unprojected is written.
        await store.commit(record, ...(user ? [user] : []));
        if (before.userId && !testMode)
          await users.reconcile(context, [before.userId], recordId, settings.suspensionThreshold);
        return resultOf(before, testMode, true);
      }

      // Decide. Iffy §4.8: a record the sampling skipped is still moderated when it is Flagged (a fixed record can
      // become Compliant and reinstate its user) or its user is Suspended.
      const moderateNow =
        input.sampled !== false ||
        (before !== null && !before.deleted && before.status === 'Flagged') ||
        user?.state?.status === 'Suspended';
      const metadata = mergeMetadata(before?.metadata, input.metadata);
      const prior = priorOf(before);
      // Judged again only when what the engine sees changed under a concurrent writer (metadata, human decision).
      const judgedKey = JSON.stringify([metadata ?? null, prior ?? null]);
      if (moderateNow && (judged?.key !== judgedKey || judged.rules !== rules)) {
        const live = splitRules(rules).live;
        judged = { key: judgedKey, rules, result: await judge(deps.engine, input, metadata, live, prior) };
      }
      const outcome = moderateNow ? judged?.result : undefined;
      const basis = outcome ? ruleBasis(settings, rules, outcome.rules) : undefined;
      const loaded = {
        record,
        user,
        recordId,
        userId,
        moderationId,
        outcome,
        testMode,
        ruleSetVersion: rulesVersion,
        basis,
      };
      let staged = stageModeration(input, loaded, context);
      // When this moderation moves the user's flagged count, the user's decision (suspend, reinstate) is taken in the
      // same commit, so that the record's webhook shows the user as the moderation left them (Iffy's showed the user
      // from before). The count is the projection's, this record's change included; the reconciliation after the
      // commit counts again (a concurrent moderation of another of the user's records is then included).
      const reconcile =
        outcome && !testMode && userId
          ? await countBeforeCommit(store, input.tenantId, userId, before, staged.at(-1)!.state as RecordState)
          : undefined;
      if (reconcile !== undefined) {
        staged = stageModeration(
          input,
          { ...loaded, reconcile: { flaggedCount: reconcile, threshold: settings.suspensionThreshold } },
          context,
        );
      }

      // Commit.
      await writer.commit(...staged);
      const after = staged[staged.length - 1]!.state as RecordState;
      // No moderation, so no status moved: no user to reconcile.
      if (!outcome) return { ...resultOf(after, testMode, false), moderationId: '', skipped: true };
      offerShadow(deps, input, config, recordId, metadata, outcome.status === 'Flagged');
      await users.afterRecordChange(context, before, after, recordId, settings);
      // The reasons found, matched text included (a passthrough record stores them without it), unless a person's
      // decision stands: then the record's status and reason are theirs.
      return {
        ...resultOf(after, testMode, false),
        reasons: after.manual ? after.reasons : outcome.reasons,
      };
    });
  } catch (err) {
    // Failed after the engine judged (a store outage, say): the command's retry starts from that judgement.
    // Calls without a command id (`/moderate`) keep nothing: their caller answers the failure.
    if (input.commandId && judged) deps.carry?.keep(input.commandId, judged);
    throw err;
  }
}

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
    const record = await store.loadRecord(recordId, fresh);
    const before = record.state;
    if (!before || before.tenantId !== input.tenantId || before.deleted || before.passthrough || !before.content)
      return 'gone';
    if (before.recentCommands.includes(input.commandId)) {
      if (!retro) return 'recorded';
      return before.status === 'Flagged' ? 'toFlagged' : 'toCompliant';
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

/** The human decision standing on a record, which prompt strategies tell the LLM about. */
function priorOf(state: RecordState | null): PriorDecision | undefined {
  return state?.manual && state.status ? { status: state.status, reason: state.manualReason } : undefined;
}

/**
 * The events of one moderate call: the user's upsert (when a user came with the record), the record's upsert, and the
 * moderation when there is an outcome (passthrough records keep reasons without the matched text). The record's
 * stream comes last.
 */
function stageModeration(
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
    /** The user's flagged count once this moderation is stored: the user's decision is staged with it. */
    reconcile?: { flaggedCount: number; threshold: number };
  },
  context: StageContext,
): Loaded<RecordState | UserState>[] {
  const { record, user, recordId, userId, moderationId, outcome, testMode, ruleSetVersion, reconcile, basis } = loaded;
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
    stagedUser = stageUser(
      userBefore,
      reconcileCommand(
        reconcile.flaggedCount,
        reconcile.threshold,
        recordId,
        outcome?.rules.length ? { rules: outcome.rules, ruleSetVersion } : undefined,
      ),
      context,
    );
  }
  const upserted = stageRecord(
    record,
    {
      type: 'UpsertRecord',
      recordId,
      input: {
        clientId: input.clientId,
        clientUrl: input.clientUrl,
        name: input.name,
        entity: input.entity,
        content: input.content,
        metadata: input.metadata,
        userId,
      },
      passthrough: input.passthrough,
      commandId: input.commandId,
    },
    context,
  );
  const staged = outcome
    ? stageRecord(
        upserted,
        {
          type: 'ModerateRecord',
          moderationId,
          outcome: input.passthrough ? { ...outcome, reasons: withoutDetails(outcome.reasons) } : outcome,
          testMode,
          commandId: input.commandId,
          ruleSetVersion,
          basis,
        },
        context,
        // The user as this commit leaves it goes into the webhook's view.
        stagedUser?.state ?? user?.state,
      )
    : upserted;
  return [...(stagedUser ? [stagedUser] : []), staged];
}

/** Runs the engine; a provider failure becomes UnavailableError (a busy tenant's TenantBusyError is one already). */
async function judge(
  engine: ModerationEngine,
  input: ModerateInput,
  metadata: Metadata | undefined,
  rules: RuleSet,
  prior: PriorDecision | undefined,
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

function resultOf(state: RecordState, testMode: boolean, duplicate: boolean): ModerateResult {
  const status = state.status ?? 'Compliant';
  return {
    recordId: state._id,
    status,
    moderationId: state.moderationId ?? '',
    userId: state.userId,
    flagged: status === 'Flagged',
    reasons: state.reasons,
    rules: state.rules,
    testMode,
    ruleSetVersion: state.ruleSetVersion ?? 0,
    duplicate,
  };
}
