import { ulid, type StartBacktest, type StartRetroaction } from '@vigil/proto';
import type { UseCaseDeps } from './deps';

/** What a start command of either kind says of its job: a fresh command id, the job's tenant and id, and when. */
export function jobCommand(job: { _id: string; tenantId: string }, now: Date) {
  return { id: ulid(), tenantId: job.tenantId, jobId: job._id, issuedAt: now.toISOString() };
}

/**
 * Sends a job's start command on the backtests' topic, keyed by tenant: a job of either kind (backtest, retroaction)
 * runs off the live path, one after another per tenant. A job not handed over is discarded, since nothing would run
 * it (and its slot is free again).
 */
export async function handOverJob(
  deps: Pick<UseCaseDeps, 'commands' | 'topics'>,
  command: StartBacktest | StartRetroaction,
  discard: () => Promise<unknown>,
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
    await discard().catch(() => undefined);
    throw err;
  }
}
