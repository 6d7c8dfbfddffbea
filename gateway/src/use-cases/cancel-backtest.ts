import type { BacktestState } from '../store/backtest-store';
import type { UseCaseDeps } from './deps';
import { backtestOf } from './get-backtest';

/** Cancels a backtest of the tenant: it stops at its next batch of records (one that ended stays as it ended). */
export async function cancelBacktest(
  deps: Pick<UseCaseDeps, 'backtests'>,
  tenantId: string,
  id: string,
): Promise<BacktestState> {
  return deps.backtests.cancel(await backtestOf(deps, tenantId, id));
}
