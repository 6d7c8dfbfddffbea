import { z } from 'zod';

/**
 * Hash feeds (docs/hash-banks.md#feeds-and-exchanges): a bank's scheduled source of hashes. The moderator owns them and
 * runs them; the gateway and the admin CLI reach them through its gRPC API. These are the shapes and bounds both sides
 * check.
 *
 * - `file`: a hash file in HMA's CSV format at a URL, fetched whole on each run (ETag / Last-Modified skip an unchanged
 *   file); hashes that left the file are withdrawn.
 * - `stopncii`: StopNCII.org's hash API, read incrementally from a checkpoint; its withdrawals delete hashes, and a
 *   match that acted sends `Blocked` feedback.
 * - `ncmec`: NCMEC's hash-sharing API, read incrementally from a checkpoint; deleted entries delete hashes.
 */
export const FeedSource = z.enum(['file', 'stopncii', 'ncmec']);
export type FeedSource = z.infer<typeof FeedSource>;

/** Where each exchange answers by default (the addresses in their public descriptions); a feed may name another. */
export const FEED_DEFAULT_URLS: Record<Exclude<FeedSource, 'file'>, string> = {
  stopncii: 'https://api.stopncii.org/v1',
  ncmec: 'https://report.cybertip.org/hashsharing',
};

export const HASH_FEED_LIMITS = {
  /** Feeds per bank. */
  perBank: 5,
  /** A feed's URL, characters. */
  url: 2000,
  /** The interval between runs, seconds: at least a minute, at most a week. */
  minIntervalS: 60,
  maxIntervalS: 7 * 24 * 3600,
  /** One credential value, characters. */
  credential: 2000,
} as const;

const Secret = z.string().min(1).max(HASH_FEED_LIMITS.credential);

/** A file feed's credential: the value of the `Authorization` header sent with each fetch (`Bearer …`, `Basic …`). */
export const FileFeedCredentials = z.strictObject({ authorization: Secret });
/** StopNCII's keys: the API subscription key, and the function keys of FetchHashes and (for feedback) SubmitFeedback. */
export const StopNciiCredentials = z.strictObject({
  subscriptionKey: Secret,
  fetchFunctionKey: Secret,
  feedbackFunctionKey: Secret.optional(),
});
/** NCMEC's hash-sharing account (HTTP basic authentication). */
export const NcmecCredentials = z.strictObject({ username: Secret, password: Secret });

/** How a feed's last run ended: hashes taken, nothing changed upstream, or a failure (retried with backoff). */
export const FeedRunState = z.enum(['ok', 'unchanged', 'failed']);
export type FeedRunState = z.infer<typeof FeedRunState>;

/** Why a run failed: a bounded set (a metric label, and what the API shows beside a short message). */
export const FeedFailure = z.enum([
  'refused',
  'timeout',
  'too_large',
  'http_status',
  'unauthorized',
  'network_error',
  'invalid_file',
  'no_credentials',
  'store',
]);
export type FeedFailure = z.infer<typeof FeedFailure>;
