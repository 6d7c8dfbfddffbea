import type { DomainEvent } from '@vigil/proto';
import { retry } from '@vigil/proto/platform';
import type { Logger } from 'pino';
import { bucketOf, type FeedbackDoc, type FeedStore } from './feed-store';

/**
 * The feedback a committed moderation owes to StopNCII: `Blocked` for each hash from a StopNCII feed whose match
 * flagged a record (an automatic moderation, the match not cancelled by a negative bank), once per feed and hash.
 * The job is written to the store (retried a few times); the feed runner sends it with retries of its own.
 */
export function feedbackOwed(events: readonly DomainEvent[], now: Date): FeedbackDoc[] {
  const owed = new Map<string, FeedbackDoc>();
  for (const event of events) {
    if (event.type !== 'RecordModerated') continue;
    const { data } = event;
    if (data.status !== 'Flagged' || data.actor !== undefined || data.testMode) continue;
    for (const match of data.hashMatches ?? []) {
      const feedId = match.metadata.feed;
      if (match.cancelledBy !== undefined || match.metadata.source !== 'stopncii' || !feedId?.startsWith('fed_')) {
        continue;
      }
      const _id = `${feedId}:${match.hashId}`;
      owed.set(_id, {
        _id,
        tenantId: event.tenantId,
        feedId,
        hashId: match.hashId,
        value: 'Blocked',
        state: 'pending',
        attempts: 0,
        dueAt: now,
        due: bucketOf(now),
        createdAt: now,
        updatedAt: now,
      });
    }
  }
  return [...owed.values()];
}

/** Queues the feedback the events owe; a store failure is retried, then logged (the moderation stands). */
export async function queueFeedback(
  feeds: FeedStore,
  log: Logger,
  events: readonly DomainEvent[],
  wake: () => void,
): Promise<void> {
  const jobs = feedbackOwed(events, new Date());
  if (jobs.length === 0) return;
  try {
    await retry(() => Promise.all(jobs.map((job) => feeds.queueFeedback(job))), {
      backoff: { initialMs: 200, maxMs: 2000 },
      maxAttempts: 5,
    });
    wake();
  } catch (err) {
    log.error({ err, jobs: jobs.length }, 'hash feed feedback could not be queued');
  }
}
