import { z } from 'zod';
import type { Strategy } from '@vigil/proto/rules';
import { ProviderError } from './types';

export interface ProviderOptions {
  /** e.g. https://api.openai.com (without /v1). */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Bound on one call, body included, milliseconds. */
  timeoutMs: number;
}

/** Highest score per category over every result the provider returned. */
export type Scores = ReadonlyMap<string, number>;

export type Thresholds = Extract<Strategy, { type: 'openai-moderation' }>['thresholds'];

const ModerationResponse = z.object({
  results: z.array(z.object({ flagged: z.boolean(), category_scores: z.record(z.string(), z.number()) })).min(1),
});

const CATEGORY_REASONS: Readonly<Record<string, string>> = {
  harassment: 'Content contains harassment',
  'harassment/threatening': 'Content contains harassment that includes threats of violence or serious harm',
  hate: 'Content contains hate speech',
  'hate/threatening': 'Content contains hateful content that includes threats of violence or serious harm',
  illicit: 'Content gives advice or instructions for committing illicit acts',
  'illicit/violent': 'Content gives advice or instructions for illicit acts involving violence or weapons',
  'self-harm': 'Content promotes, encourages or depicts self-harm',
  'self-harm/intent': 'Content expresses an intent to self-harm',
  'self-harm/instructions': 'Content encourages or instructs how to self-harm',
  sexual: 'Content contains sexual content',
  'sexual/minors': 'Content contains sexual content involving minors',
  violence: 'Content depicts violence',
  'violence/graphic': 'Content depicts graphic violence',
};

/**
 * Reasons for every category whose score is strictly greater than its threshold. A threshold of 0 flags any non-zero
 * score; a category without a threshold is ignored.
 */
export function judgeScores(scores: Scores, thresholds: Thresholds): string[] {
  const reasons: string[] = [];
  for (const [category, threshold] of Object.entries(thresholds)) {
    const score = scores.get(category);
    if (threshold !== undefined && score !== undefined && score > threshold) {
      reasons.push(CATEGORY_REASONS[category] ?? `Content flagged for ${category}`);
    }
  }
  return reasons;
}

/** Scores of the text and of each image (data URLs), the highest per category. */
export type ScoreFn = (input: string, signal?: AbortSignal, images?: readonly string[]) => Promise<Scores>;

/** A client of an OpenAI-compatible `POST /v1/moderations`. Throws ProviderError, or the caller's abort reason. */
export function createProviderClient(options: ProviderOptions): ScoreFn {
  const url = new URL('v1/moderations', options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  const one = async (input: unknown, signal?: AbortSignal): Promise<Scores> => {
    signal?.throwIfAborted();
    const raw = await postJson(
      url,
      headers,
      { model: options.model, input },
      {
        timeoutMs: options.timeoutMs,
        signal,
        name: 'moderation provider',
      },
    );

    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch (err) {
      throw new ProviderError('moderation provider answered a body that is not JSON', false, { cause: err });
    }
    const parsed = ModerationResponse.safeParse(body);
    if (!parsed.success) {
      throw new ProviderError('moderation provider answered an unexpected body', false, { cause: parsed.error });
    }
    const scores = new Map<string, number>();
    for (const result of parsed.data.results) {
      for (const [category, score] of Object.entries(result.category_scores)) {
        scores.set(category, Math.max(score, scores.get(category) ?? 0));
      }
    }
    return scores;
  };

  return async (input, signal, images = []) => {
    if (images.length === 0) return one(input, signal);
    // omni-moderation takes one image per request, as a content part beside the text: the text goes with the first
    // image, each other image alone, all at once.
    const imagePart = (url: string) => ({ type: 'image_url', image_url: { url } });
    const [first, ...others] = images;
    const all = await Promise.all([
      one(input ? [{ type: 'text', text: input }, imagePart(first!)] : [imagePart(first!)], signal),
      ...others.map((url) => one([imagePart(url)], signal)),
    ]);
    const scores = new Map<string, number>();
    for (const part of all) {
      for (const [category, score] of part) scores.set(category, Math.max(score, scores.get(category) ?? 0));
    }
    return scores;
  };
}

/**
 * POSTs a JSON body to an OpenAI-compatible API and returns the answer's text, read in full (a body cut off mid-way
 * is a transport failure, not a bad answer). Throws ProviderError (429 and 5xx, timeouts and network failures are
 * retriable), or the caller's own abort reason when `signal` fired: the caller gave up, not the provider.
 */
export async function postJson(
  url: URL | string,
  headers: Record<string, string>,
  body: unknown,
  { timeoutMs, signal, name }: { timeoutMs: number; signal?: AbortSignal; name: string },
): Promise<string> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: combined });
    if (!response.ok) {
      await response.body?.cancel();
      const retriable = response.status === 429 || response.status >= 500;
      throw new ProviderError(`${name} answered ${response.status}`, retriable);
    }
    return await response.text();
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    if (signal?.aborted) throw signal.reason;
    if (timeout.aborted) throw new ProviderError(`${name} timed out after ${timeoutMs} ms`, true, { cause: err });
    throw new ProviderError(`${name} unreachable`, true, { cause: err });
  }
}
