import { createHash } from 'node:crypto';
import type { ImageClass } from '@vigil/proto';
import type { JudgeResult, JudgeTask } from '../image-worker';
import type { OffLoopPool } from '../off-loop';
import type { FetchFailure, ImageFetcher } from './fetch';

export interface ImageOptions {
  pool: OffLoopPool;
  fetcher: ImageFetcher;
  /** Images judged per record at most, chosen deterministically among its image URLs. */
  maxPerRecord: number;
  /** Time for fetching all of a record's images, milliseconds. */
  fetchTimeoutMs: number;
  /** Running time of one image's decoding and inference, milliseconds. */
  budgetMs: number;
  /** Decoded pixels of one image at most (checked from its header, before decoding). */
  maxPixels: number;
  /** Each image's outcome (a metric): `judged`, or why it was not. */
  onImage?: (outcome: ImageOutcome) => void;
}

export type ImageFailure = FetchFailure | 'too_many_pixels' | 'undecodable' | 'budget';
export type ImageOutcome = 'judged' | ImageFailure;

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
 * Fetches the record's sampled images at once (within `fetchTimeoutMs` for them all, or the caller's deadline), then
 * judges each one that arrived in the image pool, each within `budgetMs`. Never throws for an image: a failure is
 * the image's verdict. The bytes live only here and in the worker, for the time of the judgement.
 */
export async function judgeImages(
  urls: readonly string[],
  tenantId: string,
  options: ImageOptions,
  signal?: AbortSignal,
): Promise<ImageVerdict[]> {
  const sampled = sampleImages(urls, options.maxPerRecord);
  const fetchSignal = signal
    ? AbortSignal.any([signal, AbortSignal.timeout(options.fetchTimeoutMs)])
    : AbortSignal.timeout(options.fetchTimeoutMs);
  return Promise.all(
    sampled.map(async ({ url, position }): Promise<ImageVerdict> => {
      const verdict = await judgeOne(url, tenantId, options, fetchSignal, signal);
      options.onImage?.(verdict.failure ?? 'judged');
      return { position, ...verdict };
    }),
  );
}

async function judgeOne(
  url: string,
  tenantId: string,
  options: ImageOptions,
  fetchSignal: AbortSignal,
  signal: AbortSignal | undefined,
): Promise<Omit<ImageVerdict, 'position'>> {
  const fetched = await options.fetcher.fetch(url, fetchSignal);
  if (!fetched.ok) return { failure: fetched.failure };
  const task: JudgeTask = { bytes: fetched.bytes, maxPixels: options.maxPixels };
  const outcome = await options.pool.run<JudgeResult>(tenantId, 'judge', task, {
    budgetMs: options.budgetMs,
    signal,
    transferList: [fetched.bytes.buffer as ArrayBuffer],
  });
  if (!outcome.ok) return { failure: 'budget' };
  if ('failure' in outcome.value) return { failure: outcome.value.failure };
  return { scores: outcome.value.scores };
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
