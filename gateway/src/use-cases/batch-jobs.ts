import { NotFoundError } from '../errors';
import type { BacktestState } from '../store/backtest-store';
import type { RetroactionState } from '../store/retroaction-store';
import type { UseCaseDeps } from './deps';

/** The kinds of batch job, each by the store that holds it, and the noun its errors use. */
const NOUNS = { backtests: 'backtest', retroactions: 'retroaction' } as const;
export type BatchJobKindName = keyof typeof NOUNS;

/** A batch job with its run, by kind. */
export type BatchJobStateOf<K extends BatchJobKindName> = {
  backtests: BacktestState;
  retroactions: RetroactionState;
}[K];

/** What both kinds' stores do alike. */
interface JobStore<State> {
  get(tenantId: string, id: string): Promise<State | null>;
  cancel(state: State): Promise<State>;
}

function storeOf<K extends BatchJobKindName>(deps: Pick<UseCaseDeps, K>, kind: K): JobStore<BatchJobStateOf<K>> {
  return deps[kind] as unknown as JobStore<BatchJobStateOf<K>>;
}

/** A job of the caller's tenant by its id (404 when unknown, another tenant's, or past its time to live). */
export async function batchJobOf<K extends BatchJobKindName>(
  deps: Pick<UseCaseDeps, K>,
  kind: K,
  tenantId: string,
  id: string,
): Promise<BatchJobStateOf<K>> {
  const state = await storeOf(deps, kind).get(tenantId, id);
  if (!state) throw new NotFoundError(`${NOUNS[kind]} not found`);
  return state;
}

/**
 * Cancels a job of the tenant: a backtest stops at its next batch of records, a retroaction after its current batch
 * (records already moderated stay so). One that ended stays as it ended.
 */
export async function cancelBatchJob<K extends BatchJobKindName>(
  deps: Pick<UseCaseDeps, K>,
  kind: K,
  tenantId: string,
  id: string,
): Promise<BatchJobStateOf<K>> {
  return storeOf(deps, kind).cancel(await batchJobOf(deps, kind, tenantId, id));
}
