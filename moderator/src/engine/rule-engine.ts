import {
  hashReason,
  type HashMatchRecord,
  type ImageHashRecord,
  type ImageJudgement,
  type RuleSet,
} from '@vigil/proto';
import { Content } from './content';
import { createProviderClient, judgeScores, type ProviderOptions, type ScoreFn, type Scores } from './provider';
import { createLlmClient, type JudgeFn, type LlmOptions } from './llm';
import type { ChecksResult, ChecksTask } from './engine-worker';
import { runLocalChecks, type LocalResult } from './local-checks';
import { maskText } from './pii';
import {
  dataUrls,
  fetchImages,
  imageReasons,
  judgeFetched,
  type ImageOptions,
  type ImageVerdict,
} from './images/judge-images';
import type { OffLoopPool } from './off-loop';
import { CompiledRuleSets, planRuleSet, type PlannedStrategy, type RuleSetPlan } from './rule-set';
import type { BankMatcher, EngineInput, EngineResult, ModerationEngine } from './types';
import type { FetchedSample } from './images/judge-images';

export interface EngineOptions {
  /** An OpenAI-compatible moderation API. Without it, `openai-moderation` strategies are skipped (they never flag). */
  provider?: ProviderOptions;
  /**
   * An OpenAI-compatible chat completions API. Without it, `prompt` strategies never flag; the gateway refuses them
   * (PUT /rules) when the deployment says the LLM is off, so such rules exist only through a misconfiguration.
   */
  llm?: LlmOptions;
  /**
   * Where local strategies run: a pool of worker threads (engine-worker), each record's checks within `budgetMs` of
   * running time. Without it they run on the calling thread, unbounded (unit tests).
   */
  checks?: { pool: OffLoopPool; budgetMs: number };
  /** Fetching and judging images (the `images` strategy). Without it, `images` strategies never flag. */
  images?: ImageOptions;
  /** The tenants' hash banks: the images of a tenant with an enabled bank are fetched, hashed and matched. */
  banks?: BankMatcher;
}

type PromptStrategy = Extract<PlannedStrategy, { kind: 'prompt' }>;

/** Rule sets up to this size (JSON characters) are sent with each record: copying them costs a few microseconds. */
const INLINE_RULE_SET_CHARS = 64 * 1024;

/**
 * When a caller waits for the answer (`EngineInput.deadline`): images are judged by this long before its deadline,
 * which leaves time to store the moderation and answer, and fetched by twice as long before it, which leaves the model
 * as much time again.
 */
export const ANSWER_RESERVE_MS = 1000;

const NOTHING_LOCAL: LocalResult = { findings: [], hidden: [] };

/** Compiled rule sets of the checks run on the calling thread (no pool). */
const inlineRuleSets = new CompiledRuleSets(64 * 1024 * 1024);

/**
 * The rule engine. A record is Flagged when any strategy of any enabled rule that applies to its entity flags; all
 * strategies run (no short-circuit) so that `reasons` and `rules` are complete. Throws ProviderError when the provider
 * is needed and fails, or the caller's abort reason when `signal` aborts first.
 */
export function createEngine(options: EngineOptions): ModerationEngine {
  const score: ScoreFn | undefined = options.provider ? createProviderClient(options.provider) : undefined;
  const judge: JudgeFn | undefined = options.llm ? createLlmClient(options.llm) : undefined;
  const checks = options.checks;

  /** The local findings of a record, or 'budget' when its checks ran out of time. */
  async function local(plan: RuleSetPlan, input: EngineInput, signal?: AbortSignal): Promise<LocalResult | 'budget'> {
    const content = {
      name: input.name,
      text: input.text,
      imageUrls: input.imageUrls,
      externalUrls: input.externalUrls,
      metadata: input.metadata,
    };
    if (!checks) {
      const compiled = inlineRuleSets.get(plan.key, plan.json);
      return compiled ? runLocalChecks(compiled, input.entity, content) : NOTHING_LOCAL;
    }
    // A small rule set travels with every record; a large one only to a worker that does not know its key yet.
    const task: ChecksTask = {
      key: plan.key,
      json: plan.json.length <= INLINE_RULE_SET_CHARS ? plan.json : undefined,
      entity: input.entity,
      input: content,
    };
    const tenantId = input.tenantId ?? '';
    let outcome = await checks.pool.run<ChecksResult>(tenantId, 'checks', task, { budgetMs: checks.budgetMs, signal });
    if (outcome.ok && 'missing' in outcome.value) {
      task.json = plan.json;
      outcome = await checks.pool.run<ChecksResult>(tenantId, 'checks', task, {
        budgetMs: checks.budgetMs,
        signal,
        first: true,
      });
    }
    if (!outcome.ok) return 'budget';
    return 'findings' in outcome.value ? outcome.value : NOTHING_LOCAL;
  }

  return {
    async moderate(input: EngineInput, ruleSet: RuleSet, signal?: AbortSignal): Promise<EngineResult> {
      const plan = planRuleSet(ruleSet);
      const applies = plan.rules.map((rule) => !rule.entities || rule.entities.has(input.entity));
      const rules = plan.rules.filter((_, index) => applies[index]);
      const content = new Content(input);

      const strategies = rules.flatMap((rule) => rule.strategies);
      const tenantId = input.tenantId ?? '';
      const wantsProvider = score !== undefined && rules.some((rule) => rule.usesProvider);
      const promptStrategies = judge
        ? strategies.filter((strategy): strategy is PromptStrategy => strategy.kind === 'prompt')
        : [];

      // The record's sampled images are fetched once, for the bundled model and for the AI providers alike.
      const imageOptions = options.images;
      const imagesFor = {
        model: strategies.some((strategy) => strategy.kind === 'images'),
        providers: wantsProvider || promptStrategies.some((strategy) => !strategy.skipImages),
      };
      const judgedBy = input.deadline !== undefined ? input.deadline - ANSWER_RESERVE_MS : undefined;
      const fetchedBy = judgedBy !== undefined && imagesFor.model ? judgedBy - ANSWER_RESERVE_MS : judgedBy;
      const banks = options.banks;
      const wantsBanks =
        banks !== undefined && imageOptions !== undefined && input.imageUrls.length > 0
          ? await banks.active(tenantId)
          : false;
      const fetching =
        imageOptions && input.imageUrls.length > 0 && (imagesFor.model || imagesFor.providers || wantsBanks)
          ? fetchImages(input.imageUrls, imageOptions, signal, fetchedBy)
          : undefined;
      // Each fetched image is hashed once and matched against the banks before the classifier sees it (which takes
      // the bytes away to its own thread).
      const hashWork =
        fetching && banks && wantsBanks
          ? fetching.then((samples) => hashAndMatch(banks, samples, tenantId, signal))
          : undefined;
      void hashWork?.catch(() => undefined);
      // Data URLs are made before the bytes move to the image workers.
      const urls = fetching?.then((samples) => (imagesFor.providers ? dataUrls(samples) : []));
      const imageWork =
        fetching && imageOptions && imagesFor.model
          ? fetching.then(async (samples) => {
              await urls;
              await hashWork?.catch(() => undefined);
              return judgeFetched(samples, tenantId, imageOptions, signal, false, judgedBy);
            })
          : undefined;
      void imageWork?.catch(() => undefined);

      // One provider call per record (and image) however many rules use it; it runs while the local strategies do.
      const hasText = content.fields.length > 0;
      const pending = wantsProvider
        ? (async () => {
            const images = (await urls) ?? [];
            return hasText || images.length > 0 ? score(content.forProvider, signal, images) : undefined;
          })()
        : undefined;
      void pending?.catch(() => undefined);

      // Every prompt strategy asks the LLM at once (bounded per tenant by the client), alongside the provider.
      const prompts = new Map<PlannedStrategy, Promise<boolean>>();
      if (judge) {
        for (const strategy of promptStrategies) {
          const verdict = (async () => {
            const images = strategy.skipImages ? [] : ((await urls) ?? []);
            if (!hasText && images.length === 0) return false;
            const job = {
              tenantId,
              topic: strategy.topic,
              prompt: strategy.prompt,
              content: content.forProvider,
              images,
              prior: input.prior,
            };
            return judge(job, signal);
          })();
          void verdict.catch(() => undefined);
          prompts.set(strategy, verdict);
        }
      }

      const wantsLocal = rules.some((rule) => rule.strategies.some((strategy) => strategy.kind === 'local'));
      const localResult = wantsLocal ? await local(plan, input, signal) : NOTHING_LOCAL;
      const localFindings = localResult === 'budget' ? 'budget' : localResult.findings;
      const scores: Scores | undefined = pending ? await pending : undefined;
      const verdicts = new Map<PlannedStrategy, boolean>();
      for (const [strategy, verdict] of prompts) verdicts.set(strategy, await verdict);
      const images: ImageVerdict[] = imageWork ? await imageWork : [];
      const hashed = hashWork ? await hashWork : undefined;

      const reasons = new Set<string>();
      const matched: string[] = [];
      if (localFindings === 'budget') {
        reasons.add(`Content checks exceeded their time budget (${checks?.budgetMs ?? 0} ms): flagged for review`);
      }
      plan.rules.forEach((rule, ruleIndex) => {
        if (!applies[ruleIndex]) return;
        let flagged = false;
        rule.strategies.forEach((strategy, strategyIndex) => {
          const localFound = localFindings === 'budget' ? undefined : localFindings[ruleIndex]?.[strategyIndex];
          const found = findings(strategy, localFound, scores, verdicts, images);
          if (found.length === 0) return;
          flagged = true;
          for (const reason of found) reasons.add(reason);
        });
        if (flagged && !matched.includes(rule.id)) matched.push(rule.id);
      });

      const hashMatches = hashed?.matches.filter((match) => match.cancelledBy === undefined) ?? [];
      for (const match of hashMatches) reasons.add(hashReason(match));
      const flagged = matched.length > 0 || localFindings === 'budget' || hashMatches.length > 0;
      const result: EngineResult = { status: flagged ? 'Flagged' : 'Compliant', reasons: [...reasons], rules: matched };
      if (hashed?.hashes.length) result.imageHashes = hashed.hashes;
      if (hashed?.matches.length) result.hashMatches = hashed.matches;
      if (images.length > 0) result.images = images.map(judgement);
      if (localResult !== 'budget' && localResult.hidden.length > 0) {
        result.maskedText = maskText(input.text, localResult.hidden);
      }
      return result;
    },
  };
}

/** Hashes each fetched image (all at once, off the event loop) and matches the hashes against the tenant's banks. */
async function hashAndMatch(
  banks: BankMatcher,
  samples: readonly FetchedSample[],
  tenantId: string,
  signal: AbortSignal | undefined,
): Promise<{ hashes: ImageHashRecord[]; matches: HashMatchRecord[] }> {
  const hashed = await Promise.all(
    samples.map(async ({ position, fetched }): Promise<ImageHashRecord | undefined> => {
      if (!fetched.ok) return undefined;
      const hashes = await banks.hash(tenantId, fetched.bytes, signal);
      if (!hashes) return undefined;
      return {
        position,
        md5: hashes.md5,
        sha256: hashes.sha256,
        ...(hashes.pdq ? { pdq: hashes.pdq.hash, pdqQuality: hashes.pdq.quality } : { pdqFailure: hashes.failure }),
      };
    }),
  );
  const hashes = hashed.filter((record): record is ImageHashRecord => record !== undefined);
  return { hashes, matches: hashes.length > 0 ? await banks.match(tenantId, hashes) : [] };
}

/** An image's verdict as the moderation records it: scores to four decimals (enough to compare with a threshold). */
function judgement(verdict: ImageVerdict): ImageJudgement {
  const out: ImageJudgement = { position: verdict.position };
  if (verdict.scores) {
    out.scores = Object.fromEntries(
      Object.entries(verdict.scores).map(([name, score]) => [name, Math.round((score ?? 0) * 10000) / 10000]),
    );
  }
  if (verdict.failure) out.failure = verdict.failure;
  return out;
}

/** Reasons of one strategy; a prompt's reason names its topic, never the content or the model's reasoning. */
function findings(
  strategy: PlannedStrategy,
  local: string[] | undefined,
  scores: Scores | undefined,
  verdicts: ReadonlyMap<PlannedStrategy, boolean>,
  images: readonly ImageVerdict[],
): string[] {
  switch (strategy.kind) {
    case 'local':
      return local ?? [];
    case 'provider':
      return scores ? judgeScores(scores, strategy.thresholds) : [];
    case 'prompt':
      return verdicts.get(strategy) ? [`Content flagged for ${strategy.topic}`] : [];
    case 'images':
      return imageReasons(images, strategy.thresholds, strategy.onFetchError);
  }
}
