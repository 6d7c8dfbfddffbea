import { NotFoundError } from '../errors';
import type { BacktestState } from '../store/backtest-store';
import type { UseCaseDeps } from './deps';

/** A job of the caller's tenant by its id. */
export async function backtestOf(
  deps: Pick<UseCaseDeps, 'backtests'>,
  tenantId: string,
  id: string,
): Promise<BacktestState> {
  const state = await deps.backtests.get(tenantId, id);
  if (!state) throw new NotFoundError('backtest not found');
  return state;
}
