import type { StartBacktest, StartRetroaction } from '@vigil/proto';
import type { UseCaseDeps } from './deps';

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
