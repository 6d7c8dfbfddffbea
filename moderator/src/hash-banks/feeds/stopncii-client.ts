import { z } from 'zod';
import { type HashKind } from '@vigil/proto';
import { HASH_PATTERN } from '../bank-rules';
import { FeedError, type FeedHttp } from './feed-http';
import { DeltaBuilder, type FeedPull, type PullBank } from './feed-pull';

/**
 * StopNCII.org's hash API, as far as its public description goes (StopNCII's partner documentation is given under
 * agreement; this follows the open-source client in facebook/ThreatExchange, `exchanges/clients/stopncii/api.py`):
 * - `GET {base}/FetchHashes?startTimestamp=…&pageSize=…[&nextPageToken=…]` with the headers
 *   `Ocp-Apim-Subscription-Key` and `x-functions-key` (a key per function) answers
 *   `{ count, nextPageToken, nextSetTimestamp, hasMoreRecords, hashRecords: [{ signalType, hashValue, hashStatus,
 *   lastModtimestamp, caseNumbers, CSPFeedbacks }] }`; each record is the current state of its hash;
 * - a record whose `hashStatus` is `Withdrawn` or `Deleted` is a withdrawal: the client deletes the hash;
 * - `POST {base}/SubmitFeedback` with `{ count, hashFeedbacks: [{ hashValue, feedbackValue, tags }] }` gives feedback
 *   on hashes (`Blocked`: a match was reviewed and found to be NCII; `NotBlocked`: inconclusive).
 * Anything the description leaves open (error bodies, rate limits) is treated as a failed call and retried.
 */
export interface StopNciiKeys {
  subscriptionKey: string;
  fetchFunctionKey: string;
  feedbackFunctionKey?: string;
}

/** HMA's first checkpoint: the start of StopNCII's data. */
const FIRST_TIMESTAMP = '10';
/** Records a page asks for (HMA's default). */
const PAGE_SIZE = 800;

/** Which StopNCII signal type each bank kind takes; a bank of another kind takes none. */
const SIGNAL_OF: Partial<Record<HashKind, string>> = { pdq: 'ImagePDQ', md5: 'VideoMD5' };
const WITHDRAWN = new Set(['Withdrawn', 'Deleted']);

const FetchHashesAnswer = z.object({
  nextPageToken: z.string().max(10_000).nullish(),
  nextSetTimestamp: z.number().int().nonnegative(),
  hasMoreRecords: z.boolean(),
  hashRecords: z
    .array(
      z.object({
        signalType: z.string().max(100),
        hashValue: z.string().max(1000),
        hashStatus: z.string().max(100),
      }),
    )
    .max(10_000),
});

export type StopNciiFeedback = 'Blocked' | 'NotBlocked';

export class StopNciiClient {
  constructor(
    private readonly http: FeedHttp,
    private readonly baseUrl: string,
    private readonly keys: StopNciiKeys,
  ) {}

  /**
   * Reads the changes after `checkpoint` (StopNCII's `nextSetTimestamp`), at most `maxPages` pages; `more` when the
   * API holds more (the feed runs again at once from the checkpoint returned).
   */
  async pull(
    bank: PullBank,
    checkpoint: string | undefined,
    feedId: string,
    maxPages: number,
    signal?: AbortSignal,
  ): Promise<FeedPull> {
    const wanted = SIGNAL_OF[bank.kind];
    const delta = new DeltaBuilder();
    const start = checkpoint ?? FIRST_TIMESTAMP;
    let pageToken = '';
    let next = start;
    for (let page = 0; page < maxPages; page++) {
      const query = new URLSearchParams({ startTimestamp: start, pageSize: String(PAGE_SIZE) });
      if (pageToken) query.set('nextPageToken', pageToken);
      const answer = await this.http.expect(
        'StopNCII FetchHashes',
        `${this.baseUrl}/FetchHashes?${query.toString()}`,
        { headers: this.headers(this.keys.fetchFunctionKey) },
        signal,
      );
      const parsed = FetchHashesAnswer.safeParse(parseJson(answer.text));
      if (!parsed.success) throw new FeedError('invalid_file', 'StopNCII FetchHashes: an answer of an unknown shape');
      for (const record of parsed.data.hashRecords) {
        const value = record.hashValue.trim().toLowerCase();
        if (record.signalType !== wanted || !HASH_PATTERN[bank.kind].test(value)) {
          delta.skip();
        } else if (WITHDRAWN.has(record.hashStatus)) {
          delta.withdraw(value);
        } else {
          delta.add(value, { source: 'stopncii', feed: feedId, signalType: record.signalType });
        }
      }
      next = String(parsed.data.nextSetTimestamp);
      if (!parsed.data.hasMoreRecords || !parsed.data.nextPageToken) return delta.build(next, false);
      pageToken = parsed.data.nextPageToken;
    }
    return delta.build(next, true);
  }

  /** Sends feedback on one hash; throws a FeedError when the call fails (the caller retries). */
  async feedback(value: string, feedback: StopNciiFeedback, signal?: AbortSignal): Promise<void> {
    const key = this.keys.feedbackFunctionKey;
    if (!key) throw new FeedError('no_credentials', 'no SubmitFeedback function key');
    await this.http.expect(
      'StopNCII SubmitFeedback',
      `${this.baseUrl}/SubmitFeedback`,
      {
        method: 'POST',
        headers: { ...this.headers(key), 'content-type': 'application/json' },
        body: JSON.stringify({ count: 1, hashFeedbacks: [{ hashValue: value, feedbackValue: feedback, tags: [] }] }),
      },
      signal,
    );
  }

  private headers(functionKey: string): Record<string, string> {
    return {
      accept: 'application/json',
      'Ocp-Apim-Subscription-Key': this.keys.subscriptionKey,
      'x-functions-key': functionKey,
    };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
