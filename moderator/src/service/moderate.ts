import { bankSuspensionOf, ruleBasis } from '../domain/decision-basis';
import {
  recordIdFor,
  ulid,
  userIdFor,
  type HashMatchRecord,
  type RecordStatus,
  type TenantSettings,
} from '@vigil/proto';
import { acts } from '../hash-banks/bank-rules';
import { type RuleSet } from '@vigil/proto/rules';
import { checkRecordBounds } from '../domain/bounds';
import { mergeMetadata, validateMetadata, type Metadata } from '../domain/metadata';
import type { ModerateInput } from './moderate-input';
import type { RecordState } from '../domain/record';
import type { Loaded, StageContext } from '../domain/stream';
import { recordFieldsOf, stageModeration } from './moderation-events';
import type { UserState } from '../domain/user';
import type { EventStore } from '../store/event-store';
import type { TenantConfig, TenantConfigCache } from '../store/tenant-config';
import type { ShadowRunner } from '../shadow/shadow-runner';
import { shadowVersionRules, splitRules } from '../shadow/shadow-rules';
import type { JudgementCarry, Judgement } from './judgement-carry';
import type { ActivityGate, EngineResult, ModerationEngine } from '../engine';
import { finishAppliedCommand } from './applied-command';
import { judge, priorOf } from './judge';
import { NO_GUESS, type NewRecordGuess } from './new-record-guess';
import type { StreamWriter } from './stream-writer';
import { affectedUsers, bankSuspensionAfter, flaggedCountAfter, type UserReconciliation } from './user-reconciliation';

export type { ModerateInput } from './moderate-input';

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
  /** The text with contact details hidden, when a masking `pii` strategy found some: answered, never stored. */
  maskedContent?: string;
  /** The images' hash bank matches, when the tenant has banks and an image matched. */
  hashMatches?: HashMatchRecord[];
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
  /** Marks each moderation of a record without images while it runs: image inference yields to them. */
  textActivity?: ActivityGate;
  /**
   * The first attempt of a moderation assumes its record is new and reads nothing (`MODERATE_ASSUME_NEW`): a new
   * record then costs one store read less. Only where judging again costs less than the read, for a record this
   * process has not moderated lately, while recent guesses were mostly right (see new-record-guess.ts). An existing
   * record's append conflicts, and the next attempt reads it; the judgement is used again when what the engine saw is
   * the same (no metadata of the record's, no person's decision).
   */
  newRecords?: NewRecordGuess;
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

/** What a moderation works with across its attempts: the ids, and the tenant's rules and settings. */
interface Plan {
  recordId: string;
  userId?: string;
  moderationId: string;
  /** The tenant's configuration: its settings, live rules and their version, and a shadow version if any. */
  config: TenantConfig;
  settings: TenantSettings;
  rules: RuleSet;
  rulesVersion: number;
  testMode: boolean;
  context: StageContext;
}

/** The record's and the user's streams, as loaded. */
interface Streams {
  record: Loaded<RecordState>;
  user?: Loaded<UserState>;
  /** The record was read after a guess was withdrawn (see `decide`). */
  read?: boolean;
}

/** The engine's verdict for this attempt, if the record is moderated now, and the metadata it saw. */
interface Verdict {
  outcome?: EngineResult;
  metadata?: Metadata;
}

/**
 * Upserts the user and the record, runs the engine on name, text and the merged metadata, and stores the result.
 * Every call moderates again, ingest included (no content hash: a changed rule set must apply to re-sent content).
 * The steps: load → judge → decide → commit, run again from the load when another writer took a stream version.
 */
export async function moderate(deps: ModerationDeps, input: ModerateInput): Promise<ModerateResult> {
  const leave = input.content.imageUrls?.length ? undefined : deps.textActivity?.enter();
  try {
    return await moderateRecord(deps, input);
  } finally {
    leave?.();
  }
}

async function moderateRecord(deps: ModerationDeps, input: ModerateInput): Promise<ModerateResult> {
  checkInput(input);
  const plan = await planOf(deps, input);
  // A retry of an ingest command whose earlier attempt was judged and then failed starts from that judgement.
  let judged: Judgement | undefined = input.commandId ? deps.carry?.take(input.commandId) : undefined;
  const live = splitRules(plan.rules).live;
  const { candidate, guess: guessFirst } = deps.newRecords?.plan(plan.recordId, input, live) ?? NO_GUESS;
  let attempts = 0;
  // Whether the record existed before this moderation, once a load said so: the outcome of a candidate's guess.
  let existed: boolean | undefined;
  try {
    const result = await deps.writer.retrying(async (fresh) => {
      const guess = guessFirst && attempts === 0;
      // The attempt after a wrong guess reads the snapshot as usual: the conflict was with the guess, not a fresher writer.
      const afterGuess = guessFirst && attempts === 1;
      attempts += 1;
      // Whether the streams were read past their projections (a command found applied projects what they hold).
      let readPast = fresh && !afterGuess && !guess;
      let streams = await load(deps.store, plan, fresh && !afterGuess, guess);
      // Without a user, a guess conflicts only on the record's first version: the record existed. With one, the
      // conflict may have been the user's, so the read says.
      if (afterGuess) existed = plan.userId ? streams.record.state !== null : true;
      else if (!guess) existed ??= streams.record.state !== null;
      for (;;) {
        if (input.commandId && streams.record.state?.recentCommands.includes(input.commandId)) {
          return finishApplied(deps, plan, readPast ? streams : undefined);
        }
        const judgement = await judgeRecord(deps.engine, input, plan, streams, judged);
        judged = judgement.judged;
        const staged = await decide(deps.store, input, plan, streams, judgement.verdict, guess && !streams.read);
        if (staged) return commitDecision(deps, input, plan, streams, staged, judgement.verdict);
        // The decision would move the user's flagged count, which the commit writes before its append: a wrong guess
        // must not write it, even for a moment. The record is read, and the moderation decided on what it holds.
        streams = {
          ...streams,
          record: (await deps.store.loadRecordAndUser(plan.recordId, undefined, fresh)).record,
          read: true,
        };
        readPast &&= fresh;
        existed ??= streams.record.state !== null;
      }
    });
    // A guess that committed on its first attempt was right: the record was new.
    if (candidate) deps.newRecords?.learnt(plan.recordId, existed ?? false);
    deps.newRecords?.moderated(plan.recordId);
    return result;
  } catch (err) {
    if (candidate && existed !== undefined) deps.newRecords?.learnt(plan.recordId, existed);
    // Failed after the engine judged (a store outage, say): the command's retry starts from that judgement.
    // Calls without a command id (`/moderate`) keep nothing: their caller answers the failure.
    if (input.commandId && judged) deps.carry?.keep(input.commandId, judged);
    throw err;
  }
}

function checkInput(input: ModerateInput): void {
  checkRecordBounds({ ...recordFieldsOf(input), user: input.user });
  if (input.metadata) validateMetadata(input.metadata, ['metadata']);
  if (input.user?.metadata) validateMetadata(input.user.metadata, ['user', 'metadata']);
}

async function planOf(deps: ModerationDeps, input: ModerateInput): Promise<Plan> {
  const config = await deps.tenants.get(input.tenantId);
  const { settings, rules, rulesVersion } = config;
  return {
    recordId: recordIdFor(input.tenantId, input.clientId),
    userId: input.user ? userIdFor(input.tenantId, input.user.clientId) : undefined,
    moderationId: input.moderationId ?? `mod_${ulid()}`,
    config,
    settings,
    rules,
    rulesVersion,
    testMode: settings.testMode,
    context: { tenantId: input.tenantId, correlationId: input.correlationId },
  };
}

/**
 * Load: the record's stream and, when a user came with it, the user's, in one call to the store; with `assumeNew`,
 * the record's is not read (see ModerationDeps.newRecords).
 */
function load(store: EventStore, plan: Plan, fresh: boolean, assumeNew: boolean): Promise<Streams> {
  return store.loadRecordAndUser(plan.recordId, plan.userId, fresh, { assumeNew });
}

/** The command was applied before: only what a failure may have left unwritten is (see finishAppliedCommand). */
async function finishApplied(deps: ModerationDeps, plan: Plan, readPast?: Streams): Promise<ModerateResult> {
  const ids = { recordId: plan.recordId, userId: plan.userId };
  const state = await finishAppliedCommand(deps, plan.context, plan.settings, ids, readPast);
  if (!state) throw new Error(`record ${plan.recordId} lost its stream`);
  return resultOf(state, plan.testMode, true);
}

/**
 * Judge: runs the engine when the record is moderated now. Iffy §4.8: a record the sampling skipped is still
 * moderated when it is Flagged (a fixed record can become Compliant and reinstate its user) or its user is Suspended.
 * A judgement made for this command before is used again unless what the engine sees changed under a concurrent
 * writer (metadata, human decision) or the rules changed.
 */
async function judgeRecord(
  engine: ModerationEngine,
  input: ModerateInput,
  plan: Plan,
  { record, user }: Streams,
  judged: Judgement | undefined,
): Promise<{ judged: Judgement | undefined; verdict: Verdict }> {
  const before = record.state;
  const moderateNow =
    input.sampled !== false ||
    (before !== null && !before.deleted && before.status === 'Flagged') ||
    user?.state?.status === 'Suspended';
  const metadata = mergeMetadata(before?.metadata, input.metadata);
  if (!moderateNow) return { judged, verdict: { metadata } };
  const prior = priorOf(before);
  const key = JSON.stringify([metadata ?? null, prior ?? null]);
  if (judged?.key !== key || judged.rules !== plan.rules) {
    const result = await judge(engine, input, metadata, splitRules(plan.rules).live, prior, plan.recordId);
    judged = { key, rules: plan.rules, result };
  }
  return { judged, verdict: { outcome: judged.result, metadata } };
}

/**
 * Decide: stages the events of the user's upsert, the record's upsert and its moderation. When the moderation moves
 * the user's flagged count, the user's decision (suspend, reinstate) is staged in the same commit, so that the
 * record's webhook shows the user as the moderation left them (Iffy's showed the user from before). The count is the
 * projection's with this record's change applied; it is stored with the commit, and the reconciliation after the
 * commit counts again (a concurrent moderation of another of the user's records is then included).
 */
async function decide(
  store: EventStore,
  input: ModerateInput,
  plan: Plan,
  { record, user }: Streams,
  { outcome }: Verdict,
  guessed = false,
): Promise<Loaded<RecordState | UserState>[] | undefined> {
  const loaded = {
    record,
    user,
    recordId: plan.recordId,
    userId: plan.userId,
    moderationId: plan.moderationId,
    outcome,
    testMode: plan.testMode,
    ruleSetVersion: plan.rulesVersion,
    basis: outcome ? ruleBasis(plan.settings, plan.rules, outcome.rules, bankPolicyOf(outcome)) : undefined,
    suspendsUser: outcome ? bankSuspensionOf(plan.settings, outcome.hashMatches) : undefined,
  };
  const staged = stageModeration(input, loaded, plan.context);
  // On a guess, a change to an existing user waits for the record's read too: the user's events go in before the
  // record's, so a command applied already (delivered again) would store the user's data as it was back then, over
  // later changes, before its record's first version conflicted.
  if (guessed && user?.state && staged.some((stream) => stream.kind === 'user' && stream.events.length > 0))
    return undefined;
  if (!outcome || plan.testMode || !plan.userId) return staged;
  const after = staged.at(-1)!.state as RecordState;
  // On a guess (the record assumed new), a decision that moves the user's count waits for the record's read.
  if (guessed && affectedUsers(record.state, after).length > 0) return undefined;
  const flaggedCount = await flaggedCountAfter(store, input.tenantId, plan.userId, record.state, after);
  if (flaggedCount === undefined) return staged;
  const threshold = plan.settings.suspensionThreshold;
  const bank = await bankSuspensionAfter(
    store,
    input.tenantId,
    plan.userId,
    user?.state,
    after,
    flaggedCount,
    threshold,
  );
  const reconcile = { flaggedCount, threshold, bank };
  return stageModeration(input, { ...loaded, reconcile }, plan.context);
}

/**
 * Commit: the staged streams in one commit (see StreamWriter), then the follow-ups: the shadow rules, and the users
 * whose flagged count moved.
 */
async function commitDecision(
  deps: ModerationDeps,
  input: ModerateInput,
  plan: Plan,
  { record }: Streams,
  staged: Loaded<RecordState | UserState>[],
  { outcome, metadata }: Verdict,
): Promise<ModerateResult> {
  await deps.writer.commit(...staged);
  const before = record.state;
  const after = staged[staged.length - 1]!.state as RecordState;
  // No moderation, so no status moved: no user to reconcile.
  if (!outcome) return { ...resultOf(after, plan.testMode, false), moderationId: '', skipped: true };
  offerShadow(deps, input, plan.config, plan.recordId, metadata, outcome.status === 'Flagged');
  await deps.users.afterRecordChange(plan.context, before, after, plan.recordId, plan.settings);
  // The reasons found, matched text included (a passthrough record stores them without it), unless a person's
  // decision stands: then the record's status and reason are theirs.
  return {
    ...resultOf(after, plan.testMode, false),
    reasons: after.manual ? after.reasons : outcome.reasons,
    ...(outcome.maskedText !== undefined ? { maskedContent: outcome.maskedText } : {}),
    ...(outcome.hashMatches?.length ? { hashMatches: outcome.hashMatches } : {}),
  };
}

/** The policy of the first acting hash bank match that names one: a flag by a bank rests on it. */
function bankPolicyOf(outcome: EngineResult): string | undefined {
  return outcome.hashMatches?.find((match) => acts(match) && match.policyId)?.policyId;
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
