import { addressPolicy } from '@vigil/proto';
import type { Config } from '../config';
import type { ModeratorModule, SharedParts } from '../shared-parts';
import type { BankMatcher } from './types';
import {
  ActivityGate,
  createEngine,
  ImageFetcher,
  OcrPool,
  OffLoopPool,
  VerdictCache,
  workerFile,
  type ModerationEngine,
} from '.';

/** The variables the engine, its thread pools and the image model read (see `config.ts`). */
export type EngineConfig = Pick<
  Config,
  | 'ENGINE_THREADS'
  | 'ENGINE_TENANT_THREADS'
  | 'ENGINE_RECORD_BUDGET_MS'
  | 'ENGINE_QUEUE_PER_TENANT'
  | 'ENGINE_RULE_CACHE_MB'
  | 'ENGINE_NICE'
  | 'IMAGE_THREADS'
  | 'IMAGE_MODEL'
  | 'IMAGE_MAX_PER_RECORD'
  | 'IMAGE_MAX_BYTES'
  | 'IMAGE_FETCH_TIMEOUT_MS'
  | 'IMAGE_MAX_PIXELS'
  | 'IMAGE_VERDICT_CACHE_SIZE'
  | 'IMAGE_VERDICT_CACHE_TTL_S'
  | 'IMAGE_NICE'
  | 'IMAGE_SCHED_IDLE'
  | 'IMAGE_YIELD_MS'
  | 'IMAGE_BUDGET_MS'
  | 'IMAGE_ALLOWED_CIDRS'
  | 'IMAGE_OCR'
  | 'IMAGE_OCR_BUDGET_MS'
  | 'IMAGE_OCR_PROCESSES'
  | 'IMAGE_OCR_TEXT_FIRST'
  | 'IMAGE_OCR_TEXT_FIRST_LINGER_MS'
  | 'IMAGE_OCR_TEXT_FIRST_MAX_PAUSED_MS'
  | 'IMAGE_OCR_TEXT_FIRST_WINDOW_MS'
  | 'OPENAI_BASE_URL'
  | 'OPENAI_API_KEY'
  | 'OPENAI_MODERATION_MODEL'
  | 'OPENAI_TIMEOUT_MS'
  | 'LLM_BASE_URL'
  | 'LLM_API_KEY'
  | 'LLM_MODEL'
  | 'LLM_REVIEW_MODEL'
  | 'LLM_TIMEOUT_MS'
  | 'LLM_MAX_ATTEMPTS'
  | 'LLM_RETRY_INITIAL_MS'
  | 'LLM_TENANT_CONCURRENCY'
>;

export interface EngineModule extends ModeratorModule {
  engine: ModerationEngine;
  /**
   * Moderations of records without images in flight: image inference starts between them (IMAGE_YIELD_MS), and OCR
   * stops while they run (IMAGE_OCR_TEXT_FIRST).
   */
  textActivity: ActivityGate;
}

/** The fetcher of the images the engine judges, which the hash banks' lookups by URL use too. */
export function imageFetcherFor(config: Pick<Config, 'IMAGE_ALLOWED_CIDRS' | 'IMAGE_MAX_BYTES'>): ImageFetcher {
  return new ImageFetcher({ policy: addressPolicy(config.IMAGE_ALLOWED_CIDRS), maxBytes: config.IMAGE_MAX_BYTES });
}

/**
 * The rule engine with its thread pools: rule checks off the event loop, and image inference on threads of its own
 * at a lower priority. Ready once every image thread loaded the model; its pools close last, after the work that
 * uses them drained. A given `engine` (tests) replaces all of it.
 */
export function engineModule(
  config: EngineConfig,
  { log, metrics }: Pick<SharedParts, 'log' | 'metrics'>,
  given?: ModerationEngine,
  { fetcher, banks }: { fetcher?: ImageFetcher; banks?: BankMatcher } = {},
): EngineModule {
  const textActivity = new ActivityGate();
  const onTask = (name: string, seconds: number, outcome: 'ok' | 'budget' | 'error') =>
    metrics?.offLoop.observe({ task: name, outcome }, seconds);
  const threads = config.ENGINE_THREADS;
  const pool = given
    ? undefined
    : new OffLoopPool({
        filename: workerFile('engine-worker'),
        threads,
        tenantThreads: config.ENGINE_TENANT_THREADS ?? Math.max(1, threads - 1),
        maxQueuedPerTenant: config.ENGINE_QUEUE_PER_TENANT,
        workerData: { ruleCacheBytes: config.ENGINE_RULE_CACHE_MB * 1024 * 1024 },
        niceIncrement: config.ENGINE_NICE,
        onTask,
      });
  // Image work has threads of its own (inference takes 60-500 ms an image), at a lower priority than the rest.
  const imageThreads = given ? 0 : config.IMAGE_THREADS;
  const imagePool =
    imageThreads > 0
      ? new OffLoopPool({
          filename: workerFile('image-worker'),
          threads: imageThreads,
          tenantThreads: Math.max(1, imageThreads - 1),
          maxQueuedPerTenant: config.ENGINE_QUEUE_PER_TENANT,
          workerData: { model: config.IMAGE_MODEL, schedIdle: config.IMAGE_SCHED_IDLE },
          niceIncrement: config.IMAGE_NICE,
          onTask,
          yieldTo: { gate: textActivity, maxDelayMs: config.IMAGE_YIELD_MS },
        })
      : undefined;
  // OCR (`image-text` strategies) runs in processes of its own, all their threads under SCHED_IDLE, and with text
  // first, stopped while text-only moderations run.
  const ocrPool =
    !given && config.IMAGE_OCR
      ? new OcrPool({
          processes: config.IMAGE_OCR_PROCESSES,
          maxQueuedPerTenant: config.ENGINE_QUEUE_PER_TENANT,
          priority: config.IMAGE_SCHED_IDLE ? 'idle' : 'nice',
          onTask: (seconds, outcome) => metrics?.offLoop.observe({ task: 'read', outcome }, seconds),
          onExit: ({ code, signal }) => log.warn({ code, signal }, 'OCR process ended; starting it again'),
          textFirst: config.IMAGE_OCR_TEXT_FIRST
            ? {
                gate: textActivity,
                lingerMs: config.IMAGE_OCR_TEXT_FIRST_LINGER_MS,
                maxPausedMs: config.IMAGE_OCR_TEXT_FIRST_MAX_PAUSED_MS,
                windowMs: config.IMAGE_OCR_TEXT_FIRST_WINDOW_MS,
                onPause: (ms, end) => metrics?.ocrPauses.observe({ end }, ms / 1000),
              }
            : undefined,
        })
      : undefined;
  // Images are fetched for the bundled model and for the AI providers (which receive them as data URLs).
  const imageFetcher = given ? undefined : (fetcher ?? imageFetcherFor(config));
  let modelsLoaded = !imagePool;
  let ocrLoaded = !ocrPool;
  const engine =
    given ??
    createEngine({
      banks,
      checks: pool ? { pool, budgetMs: config.ENGINE_RECORD_BUDGET_MS } : undefined,
      images: imageFetcher
        ? {
            fetcher: imageFetcher,
            maxPerRecord: config.IMAGE_MAX_PER_RECORD,
            fetchTimeoutMs: config.IMAGE_FETCH_TIMEOUT_MS,
            model: imagePool
              ? {
                  pool: imagePool,
                  budgetMs: config.IMAGE_BUDGET_MS,
                  maxPixels: config.IMAGE_MAX_PIXELS,
                  cache:
                    config.IMAGE_VERDICT_CACHE_SIZE > 0
                      ? new VerdictCache({
                          max: config.IMAGE_VERDICT_CACHE_SIZE,
                          ttlMs: config.IMAGE_VERDICT_CACHE_TTL_S * 1000,
                        })
                      : undefined,
                }
              : undefined,
            onImage: (outcome) => metrics?.images.inc({ outcome }),
            ocr: ocrPool
              ? { pool: ocrPool, budgetMs: config.IMAGE_OCR_BUDGET_MS, maxPixels: config.IMAGE_MAX_PIXELS }
              : undefined,
            onText: (outcome) => metrics?.imageTexts.inc({ outcome }),
          }
        : undefined,
      provider: config.OPENAI_BASE_URL
        ? {
            baseUrl: config.OPENAI_BASE_URL,
            apiKey: config.OPENAI_API_KEY,
            model: config.OPENAI_MODERATION_MODEL,
            timeoutMs: config.OPENAI_TIMEOUT_MS,
          }
        : undefined,
      llm: config.LLM_BASE_URL
        ? {
            baseUrl: config.LLM_BASE_URL,
            apiKey: config.LLM_API_KEY,
            model: config.LLM_MODEL,
            reviewModel: config.LLM_REVIEW_MODEL,
            timeoutMs: config.LLM_TIMEOUT_MS,
            maxAttempts: config.LLM_MAX_ATTEMPTS,
            retryInitialMs: config.LLM_RETRY_INITIAL_MS,
            tenantConcurrency: config.LLM_TENANT_CONCURRENCY,
          }
        : undefined,
    });
  // One model load per thread: each `ready` task is a tenant of its own, so that each takes a thread. Begun as the
  // module is built, as the slowest part of a start (seconds); not awaited: the service is live meanwhile, and ready
  // once they are loaded.
  if (imagePool) {
    void Promise.all(
      Array.from({ length: imageThreads }, (_, index) =>
        imagePool.run<{ scheduling: string }>(`ready-${index}`, 'ready', {}, { budgetMs: 10 * 60_000 }),
      ),
    ).then(
      (outcomes) => {
        modelsLoaded = true;
        const scheduling = outcomes.map((outcome) => (outcome.ok ? outcome.value.scheduling : 'unknown'));
        log.info({ threads: imageThreads, model: config.IMAGE_MODEL, scheduling }, 'image model loaded');
      },
      (err: unknown) => log.error({ err }, 'image model failed to load'),
    );
  }
  if (ocrPool) {
    void ocrPool.ready().then(() => {
      ocrLoaded = true;
      log.info({ processes: config.IMAGE_OCR_PROCESSES, scheduling: ocrPool.scheduling }, 'OCR model loaded');
    });
  }
  return {
    name: 'engine',
    engine,
    textActivity,
    ready: () => modelsLoaded && ocrLoaded,
    async drain() {
      await pool?.close();
      await imagePool?.close();
      await ocrPool?.close();
      await imageFetcher?.close();
    },
  };
}
