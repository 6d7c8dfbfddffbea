import { type HashMatchRecord, type ImageHashRecord, type ImageJudgement } from '@vigil/proto';
import { acts, hashReason } from '../hash-banks/bank-rules';
import { type RuleSet } from '@vigil/proto/rules';
import { Content, type ContentInput } from './content';
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
  readFetched,
  type FetchedSample,
  type ImageOptions,
  type ImageText,
  type ImageVerdict,
} from './images/judge-images';
import type { OffLoopPool } from './off-loop';
import { CompiledRuleSets, planRuleSet, type PlannedStrategy, type RuleSetPlan } from './rule-set';
import type { BankMatcher, EngineInput, EngineResult, ModerationEngine } from './types';

export interface EngineOptions {
  /** The tenants' hash banks: the images of a tenant with an enabled bank are fetched, hashed and matched. */
  banks?: BankMatcher;
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
  /**
   * Fetching and judging images (the `images` strategy) and reading their text (`image-text`, with `images.ocr`).
   * Without it, `images` strategies never flag and `image-text` strategies read nothing.
   */
  images?: ImageOptions;
}

type PromptStrategy = Extract<PlannedStrategy, { kind: 'prompt' }>;

/** What the local checks of one image's text read: that text alone, as the record's text (so `pii` spans point in it). */
function imageTextContent(text: string): ContentInput {
  return { name: '', text, imageUrls: [], externalUrls: [] };
}

/** A local reason about an image's text: "Content contains …" becomes "Image 2's text contains …". */
function inImageText(reason: string, position: number): string {
  const where = `Image ${position}'s text`;
  return reason.startsWith('Content ') ? `${where} ${reason.slice('Content '.length)}` : `${reason} (in ${where})`;
}

/** What the provider and prompt strategies read: the record's fields, then each image's text on a line of its own. */
function withImageTexts(forProvider: string, texts: readonly ImageText[]): string {
  const lines = texts.flatMap(({ position, text }) => (text ? [`Image ${position}'s text: ${text}`] : []));
  return [forProvider, ...lines].filter((line) => line.length > 0).join('\n');
}

/** Rule sets up to this size (JSON characters) are sent with each record: copying them costs a few microseconds. */
const INLINE_RULE_SET_CHARS = 64 * 1024;

/**
 * When a caller waits for the answer (`EngineInput.deadline`): images are judged by this long before its deadline,
 * which leaves time to store the moderation and answer, and fetched by twice as long before it, which leaves the model
 * as much time again.
 */
const ANSWER_RESERVE_MS = 1000;

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
  async function local(
    plan: RuleSetPlan,
    entity: string,
    content: ContentInput,
    tenantId: string,
    signal?: AbortSignal,
  ): Promise<LocalResult | 'budget'> {
    if (!checks) {
      const compiled = inlineRuleSets.get(plan.key, plan.json);
      return compiled ? runLocalChecks(compiled, entity, content) : NOTHING_LOCAL;
    }
    // A small rule set travels with every record; a large one only to a worker that does not know its key yet.
    const task: ChecksTask = {
      key: plan.key,
      json: plan.json.length <= INLINE_RULE_SET_CHARS ? plan.json : undefined,
      entity,
      input: content,
    };
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

      // The record's sampled images are fetched once, for the bundled model, OCR and the AI providers alike.
      const imageOptions = options.images;
      const imagesFor = {
        model: strategies.some((strategy) => strategy.kind === 'images'),
        text: strategies.some((strategy) => strategy.kind === 'image-text'),
        providers: wantsProvider || promptStrategies.some((strategy) => !strategy.skipImages),
      };
      const judgedBy = input.deadline !== undefined ? input.deadline - ANSWER_RESERVE_MS : undefined;
      const fetchedBy =
        judgedBy !== undefined && (imagesFor.model || imagesFor.text) ? judgedBy - ANSWER_RESERVE_MS : judgedBy;
      const banks = options.banks;
      const wantsBanks =
        banks !== undefined && imageOptions !== undefined && input.imageUrls.length > 0
          ? await banks.active(tenantId)
          : false;
      const fetching =
        imageOptions &&
        input.imageUrls.length > 0 &&
        (imagesFor.model || imagesFor.text || imagesFor.providers || wantsBanks)
          ? fetchImages(input.imageUrls, imageOptions, signal, fetchedBy)
          : undefined;
      // Each fetched image is hashed once and matched against the banks before the classifier and the reader see it
      // (which take the bytes away to their own threads).
      const hashWork =
        fetching && banks && wantsBanks
          ? fetching.then((samples) => hashAndMatch(banks, samples, tenantId, input.recordId, signal))
          : undefined;
      void hashWork?.catch(() => undefined);
      // Data URLs are made before the bytes move to the image workers.
      const urls = fetching?.then((samples) => (imagesFor.providers ? dataUrls(samples) : []));
      const imageWork =
        fetching && imageOptions && imagesFor.model
          ? fetching.then(async (samples) => {
              await urls;
              await hashWork?.catch(() => undefined);
              return judgeFetched(samples, tenantId, imageOptions, signal, imagesFor.text, judgedBy);
            })
          : undefined;
      void imageWork?.catch(() => undefined);
      // The text in the images (OCR), read beside the model's judging, by the same deadline.
      const textWork =
        fetching && imageOptions && imagesFor.text
          ? fetching.then(async (samples) => {
              await hashWork?.catch(() => undefined);
              return readFetched(samples, tenantId, imageOptions, signal, judgedBy);
            })
          : undefined;
      void textWork?.catch(() => undefined);
      // Providers and prompts read the images' text with the record's fields, so they wait for it.
      const providerText = textWork
        ? textWork.then((texts) => withImageTexts(content.forProvider, texts))
        : Promise.resolve(content.forProvider);
      void providerText.catch(() => undefined);

      // One provider call per record (and image) however many rules use it; it runs while the local strategies do.
      const pending = wantsProvider
        ? (async () => {
            const images = (await urls) ?? [];
            const text = await providerText;
            return text.length > 0 || images.length > 0 ? score(text, signal, images) : undefined;
          })()
        : undefined;
      void pending?.catch(() => undefined);

      // Every prompt strategy asks the LLM at once (bounded per tenant by the client), alongside the provider.
      const prompts = new Map<PlannedStrategy, Promise<boolean>>();
      if (judge) {
        for (const strategy of promptStrategies) {
          const verdict = (async () => {
            const images = strategy.skipImages ? [] : ((await urls) ?? []);
            const text = await providerText;
            if (text.length === 0 && images.length === 0) return false;
            const job = {
              tenantId,
              topic: strategy.topic,
              prompt: strategy.prompt,
              content: text,
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
      const record = {
        name: input.name,
        text: input.text,
        imageUrls: input.imageUrls,
        externalUrls: input.externalUrls,
        metadata: input.metadata,
      };
      const localResult = wantsLocal ? await local(plan, input.entity, record, tenantId, signal) : NOTHING_LOCAL;
      const localFindings = localResult === 'budget' ? 'budget' : localResult.findings;
      // Each image's text, as a record of its own, through the same local checks.
      const texts: ImageText[] = textWork ? await textWork : [];
      const textResults = wantsLocal
        ? await Promise.all(
            texts.flatMap(({ position, text }) =>
              text
                ? [
                    local(plan, input.entity, imageTextContent(text), tenantId, signal).then((found) => ({
                      position,
                      found,
                    })),
                  ]
                : [],
            ),
          )
        : [];
      const scores: Scores | undefined = pending ? await pending : undefined;
      const verdicts = new Map<PlannedStrategy, boolean>();
      for (const [strategy, verdict] of prompts) verdicts.set(strategy, await verdict);
      const images: ImageVerdict[] = imageWork ? await imageWork : [];
      const hashed = hashWork ? await hashWork : undefined;

      const reasons = new Set<string>();
      const matched: string[] = [];
      let overBudget = localFindings === 'budget';
      if (localFindings === 'budget') {
        reasons.add(`Content checks exceeded their time budget (${checks?.budgetMs ?? 0} ms): flagged for review`);
      }
      for (const { position, found } of textResults) {
        if (found !== 'budget') continue;
        overBudget = true;
        reasons.add(
          `Checks of image ${position}'s text exceeded their time budget (${checks?.budgetMs ?? 0} ms): flagged for review`,
        );
      }
      plan.rules.forEach((rule, ruleIndex) => {
        if (!applies[ruleIndex]) return;
        let flagged = false;
        rule.strategies.forEach((strategy, strategyIndex) => {
          const localFound = localFindings === 'budget' ? undefined : localFindings[ruleIndex]?.[strategyIndex];
          const found = [...findings(strategy, localFound, scores, verdicts, images, texts)];
          for (const { position, found: inText } of textResults) {
            if (inText === 'budget') continue;
            for (const reason of inText.findings[ruleIndex]?.[strategyIndex] ?? []) {
              found.push(inImageText(reason, position));
            }
          }
          if (found.length === 0) return;
          flagged = true;
          for (const reason of found) reasons.add(reason);
        });
        if (flagged && !matched.includes(rule.id)) matched.push(rule.id);
      });

      const hashMatches = hashed?.matches.filter(acts) ?? [];
      for (const match of hashMatches) reasons.add(hashReason(match));
      const flagged = matched.length > 0 || overBudget || hashMatches.length > 0;
      const result: EngineResult = { status: flagged ? 'Flagged' : 'Compliant', reasons: [...reasons], rules: matched };
      if (hashed?.hashes.length) result.imageHashes = hashed.hashes;
      if (hashed?.matches.length) result.hashMatches = hashed.matches;
      const judged = judgements(images, texts);
      if (judged.length > 0) result.images = judged;
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
  recordId: string | undefined,
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
  return {
    hashes,
    matches: hashes.length > 0 ? await banks.match(tenantId, hashes, recordId ? { recordId } : undefined) : [],
  };
}

/** Each image's verdict and read text, by position. */
function judgements(verdicts: readonly ImageVerdict[], texts: readonly ImageText[]): ImageJudgement[] {
  const byPosition = new Map<number, ImageJudgement>();
  for (const verdict of verdicts) byPosition.set(verdict.position, judgement(verdict));
  for (const { position, text, failure } of texts) {
    const out = byPosition.get(position) ?? { position };
    if (text) out.text = text;
    if (failure) out.textFailure = failure;
    byPosition.set(position, out);
  }
  return [...byPosition.values()].sort((a, b) => a.position - b.position);
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
  texts: readonly ImageText[],
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
    case 'image-text':
      return strategy.onTimeout === 'flag'
        ? texts.flatMap(({ position, failure }) =>
            failure === 'timeout' || failure === 'budget'
              ? [`Image ${position}'s text could not be read in time (${failure}): flagged for review`]
              : [],
          )
        : [];
  }
}
