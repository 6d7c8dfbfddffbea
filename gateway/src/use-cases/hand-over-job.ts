import { ulid, type StartBacktest, type StartRetroaction } from '@vigil/proto';
import type { UseCaseDeps } from './deps';

/** What a start command of either kind says of its job: a fresh command id, the job's tenant and id, and when. */
export function jobCommand(job: { _id: string; tenantId: string }, now: Date) {
  return { id: ulid(), tenantId: job.tenantId, jobId: job._id, issuedAt: now.toISOString() };
}

/** What a hand-over needs of its kind's store (`BatchJobStore`): neither throws, each reports its own failure. */
interface HandOverStore<Job> {
  sent(job: Job): Promise<void>;
  discard(job: Job): Promise<boolean>;
}

/**
 * Sends a job's start command on the backtests' topic, keyed by tenant: a job of either kind (backtest, retroaction)
 * runs off the live path, one after another per tenant. A job not handed over is discarded, since nothing would run
 * it (and its slot is free again); one handed over is noted `sent`, so that its slot is never released as unsent.
 */
export async function handOverJob<Job>(
  deps: Pick<UseCaseDeps, 'commands' | 'topics'>,
  command: StartBacktest | StartRetroaction,
  store: HandOverStore<Job>,
  job: Job,
): Promise<void> {
  try {
    await deps.commands.send({
      topic: deps.topics.backtests,
      key: command.tenantId,
      id: command.id,
      type: command.type,
      value: command,
    });
  } catch (err) {
    await store.discard(job);
    throw err;
  }
  await store.sent(job);
}
