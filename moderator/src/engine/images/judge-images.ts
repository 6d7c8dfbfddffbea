import { createHash, webcrypto } from 'node:crypto';
import type { ImageClass } from '@vigil/proto/rules';
import { LRUCache } from 'lru-cache';
import type { JudgeResult, JudgeTask } from '../image-worker';
import type { OffLoopPool } from '../off-loop';
import type { FetchedImage, FetchFailure, ImageFetcher } from './fetch';
import type { OcrPool, ReadTask } from './ocr-pool';

export interface ImageOptions {
  fetcher: ImageFetcher;
  /** Images judged per record at most, chosen deterministically among its image URLs. */
  maxPerRecord: number;
  /** Time for fetching all of a record's images, milliseconds. */
  fetchTimeoutMs: number;
  /** The bundled model (the `images` strategy); without it, images only go to the AI providers. */
  model?: {
    pool: OffLoopPool;
    /** Running time of one image's decoding and inference, milliseconds. */
    budgetMs: number;
    /** Decoded pixels of one image at most (checked from its header, before decoding). */
    maxPixels: number;
    /** Scores of images judged before, by the SHA-256 of their bytes. */
    cache?: VerdictCache;
  };
  /**
   * Reading the text in images (the `image-text` strategy), with tesseract.js in the OCR processes. Without it,
   * `image-text` strategies read nothing.
   */
  ocr?: {
    pool: OcrPool;
    /** Running time of one image's decoding and OCR, milliseconds. */
    budgetMs: number;
    /** Decoded pixels of one image at most (checked from its header, before decoding). */
    maxPixels: number;
  };
  /** Each image's outcome (a metric): `fetched`, then `judged`, or why not. */
  onImage?: (outcome: ImageOutcome) => void;
  /** Each image's text reading (a metric): `read` (text found), `empty` (none), or why not. */
  onText?: (outcome: TextOutcome) => void;
}

/** How reading an image's text ended: some text, none, or why it was not read. */
export type TextOutcome = 'read' | 'empty' | FetchFailure | 'too_many_pixels' | 'undecodable' | 'budget' | 'no_ocr';

/** The text read in one sampled image (by its 1-based position), or why none was read. */
export interface ImageText {
  position: number;
  /** Whitespace collapsed; '' when the image holds no text. */
  text?: string;
  failure?: Exclude<TextOutcome, 'read' | 'empty'>;
}

type ImageFailure = FetchFailure | 'too_many_pixels' | 'undecodable' | 'budget' | 'no_model';
/** `cached`: judged from a verdict kept for the same bytes, without running the model. */
export type ImageOutcome = 'fetched' | 'judged' | 'cached' | ImageFailure;

type ImageScores = Partial<Record<ImageClass, number>>;

/**
 * The model's scores of images it judged, in memory, by the SHA-256 of the image's bytes: at most `max` entries,
 * each used for `ttlMs`. Only scores are kept (never bytes or URLs), and only successful judgements: a failure (budget,
 * undecodable) is tried again next time.
 */
export class VerdictCache {
  private readonly entries: LRUCache<string, ImageScores>;

  constructor(options: { max: number; ttlMs: number }) {
    this.entries = new LRUCache({ max: options.max, ttl: options.ttlMs });
  }

  /** The digest runs in libuv's thread pool (WebCrypto), not on the event loop, whatever the image's size. */
  static async keyOf(bytes: Uint8Array): Promise<string> {
    return Buffer.from(await webcrypto.subtle.digest('SHA-256', bytes)).toString('base64url');
  }

  get(key: string): ImageScores | undefined {
    return this.entries.get(key);
  }

  set(key: string, scores: ImageScores): void {
    this.entries.set(key, scores);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** A sampled image, fetched or not, with its 1-based position among the record's image URLs. */
export interface FetchedSample {
  position: number;
  fetched: FetchedImage;
}

/** One sampled image: its 1-based position among the record's image URLs, and its scores or why it has none. */
export interface ImageVerdict {
  position: number;
  scores?: Partial<Record<ImageClass, number>>;
  failure?: ImageFailure;
}

/**
 * The record's images to judge: at most `max` distinct URLs, the same ones whenever the record is judged again (by the
 * SHA-256 of each URL, a stable order unrelated to where the client put them), with their positions in the record.
 */
export function sampleImages(urls: readonly string[], max: number): { url: string; position: number }[] {
  const seen = new Set<string>();
  const distinct: { url: string; position: number; rank: string }[] = [];
  urls.forEach((url, index) => {
    if (seen.has(url)) return;
    seen.add(url);
    distinct.push({ url, position: index + 1, rank: createHash('sha256').update(url).digest('hex') });
  });
  return distinct
    .sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0))
    .slice(0, max)
    .sort((a, b) => a.position - b.position)
    .map(({ url, position }) => ({ url, position }));
}

/**
 * Fetches the record's sampled images at once, within `fetchTimeoutMs` for them all, and by `by` (epoch ms) when the
 * caller waits for the answer. Never throws for an image: a failure is the image's outcome. The bytes live in memory
 * only, for this moderation.
 */
export async function fetchImages(
  urls: readonly string[],
  options: ImageOptions,
  signal?: AbortSignal,
  by?: number,
): Promise<FetchedSample[]> {
  const ms = by === undefined ? options.fetchTimeoutMs : Math.min(options.fetchTimeoutMs, by - Date.now());
  const timeout = AbortSignal.timeout(Math.max(0, ms));
  const fetchSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
  return Promise.all(
    sampleImages(urls, options.maxPerRecord).map(async ({ url, position }) => {
      const fetched = await options.fetcher.fetch(url, fetchSignal);
      options.onImage?.(fetched.ok ? 'fetched' : fetched.failure);
      return { position, fetched };
    }),
  );
}

/**
 * Judges each fetched image with the bundled model in the image pool, each within the model's budget, all at once.
 * `keepBytes`: the images are still needed (by a provider), so the worker gets a copy instead of the buffer itself.
 * `by` (epoch ms): an image not judged by then is a `timeout` (a waiting task is dropped; a running one ends within its
 * budget, its verdict unused), so that a caller waiting for the answer gets it.
 */
export async function judgeFetched(
  samples: readonly FetchedSample[],
  tenantId: string,
  options: ImageOptions,
  signal: AbortSignal | undefined,
  keepBytes: boolean,
  by?: number,
): Promise<ImageVerdict[]> {
  const model = options.model;
  return Promise.all(
    samples.map(async ({ position, fetched }): Promise<ImageVerdict> => {
      if (!fetched.ok) return { position, failure: fetched.failure };
      if (!model) return { position, failure: 'no_model' };
      const key = model.cache ? await VerdictCache.keyOf(fetched.bytes) : undefined;
      const known = key !== undefined ? model.cache?.get(key) : undefined;
      if (known) {
        options.onImage?.('cached');
        return { position, scores: known };
      }
      const bytes = keepBytes ? fetched.bytes.slice() : fetched.bytes;
      const task: JudgeTask = { bytes, maxPixels: model.maxPixels };
      const outcome = await inTime(by, signal, (jobSignal) =>
        model.pool.run<JudgeResult>(tenantId, 'judge', task, {
          budgetMs: model.budgetMs,
          signal: jobSignal,
          transferList: [bytes.buffer as ArrayBuffer],
        }),
      );
      if (outcome === 'late') {
        options.onImage?.('timeout');
        return { position, failure: 'timeout' };
      }
      const verdict: ImageVerdict = !outcome.ok
        ? { position, failure: 'budget' }
        : 'failure' in outcome.value
          ? { position, failure: outcome.value.failure }
          : { position, scores: outcome.value.scores };
      if (key !== undefined && verdict.scores) model.cache?.set(key, verdict.scores);
      options.onImage?.(verdict.failure ?? 'judged');
      return verdict;
    }),
  );
}

/**
 * Reads the text in each fetched image with tesseract.js in the OCR processes, each within the OCR budget, all at
 * once. The process gets a copy of the bytes (the model and the providers may need them too). `by` (epoch ms): an image not read by then is
 * a `timeout`, as in judgeFetched.
 */
export async function readFetched(
  samples: readonly FetchedSample[],
  tenantId: string,
  options: ImageOptions,
  signal: AbortSignal | undefined,
  by?: number,
): Promise<ImageText[]> {
  const ocr = options.ocr;
  return Promise.all(
    samples.map(async ({ position, fetched }): Promise<ImageText> => {
      const done = (text: ImageText): ImageText => {
        options.onText?.(text.failure ?? (text.text ? 'read' : 'empty'));
        return text;
      };
      if (!fetched.ok) return done({ position, failure: fetched.failure });
      if (!ocr) return done({ position, failure: 'no_ocr' });
      // A copy: the model's task may move the image's buffer to its thread while this reading waits.
      const task: ReadTask = { bytes: fetched.bytes.slice(), maxPixels: ocr.maxPixels };
      const outcome = await inTime(by, signal, (jobSignal) =>
        ocr.pool.read(tenantId, task, { budgetMs: ocr.budgetMs, signal: jobSignal }),
      );
      if (outcome === 'late') return done({ position, failure: 'timeout' });
      if (!outcome.ok) return done({ position, failure: 'budget' });
      if ('failure' in outcome.value) return done({ position, failure: outcome.value.failure });
      return done({ position, text: outcome.value.text });
    }),
  );
}

/**
 * `run`'s result, or 'late' when `by` (epoch ms) comes first; `run` gets a signal that aborts then (and with `signal`).
 * Without `by`, just `run` under `signal`.
 */
async function inTime<T>(
  by: number | undefined,
  signal: AbortSignal | undefined,
  run: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T | 'late'> {
  if (by === undefined) return run(signal);
  const late = new AbortController();
  const timer = setTimeout(() => late.abort(), Math.max(0, by - Date.now()));
  const lateness = new Promise<'late'>((resolve) =>
    late.signal.addEventListener('abort', () => resolve('late'), { once: true }),
  );
  const running = run(signal ? AbortSignal.any([signal, late.signal]) : late.signal);
  // Once late, the task's own end (a rejection when it was dropped) is no one's concern.
  running.catch(() => undefined);
  try {
    return await Promise.race([running, lateness]);
  } catch (err) {
    // A task still waiting when the time came is dropped with a rejection: late too, unless the caller went away.
    if (late.signal.aborted && !signal?.aborted) return 'late';
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** Fetches and judges a record's sampled images (the two steps above, for one strategy). */
export async function judgeImages(
  urls: readonly string[],
  tenantId: string,
  options: ImageOptions,
  signal?: AbortSignal,
): Promise<ImageVerdict[]> {
  return judgeFetched(await fetchImages(urls, options, signal), tenantId, options, signal, false);
}

/** The fetched images as data URLs, for the AI providers' image inputs. */
export function dataUrls(samples: readonly FetchedSample[]): string[] {
  return samples.flatMap(({ fetched }) =>
    fetched.ok ? [`data:${fetched.contentType};base64,${Buffer.from(fetched.bytes).toString('base64')}`] : [],
  );
}

/** Reasons of one `images` strategy: each image and class over its threshold, and, if asked, each image not judged. */
export function imageReasons(
  verdicts: readonly ImageVerdict[],
  thresholds: Partial<Record<ImageClass, number>>,
  onFetchError: 'ignore' | 'flag',
): string[] {
  const reasons: string[] = [];
  for (const verdict of verdicts) {
    if (verdict.scores) {
      for (const [name, threshold] of Object.entries(thresholds) as [ImageClass, number][]) {
        const score = verdict.scores[name];
        if (score !== undefined && score > threshold) {
          reasons.push(`Image ${verdict.position} classified as ${name} (${score.toFixed(2)})`);
        }
      }
    } else if (onFetchError === 'flag') {
      reasons.push(
        `Image ${verdict.position} could not be judged (${verdict.failure ?? 'unknown'}): flagged for review`,
      );
    }
  }
  return reasons;
}
