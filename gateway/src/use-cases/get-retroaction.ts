import { NotFoundError } from '../errors';
import type { RetroactionState } from '../store/retroaction-store';
import type { UseCaseDeps } from './deps';

/** A retroaction of the caller's tenant by its id. */
export async function retroactionOf(
  deps: Pick<UseCaseDeps, 'retroactions'>,
  tenantId: string,
  id: string,
): Promise<RetroactionState> {
  const state = await deps.retroactions.get(tenantId, id);
  if (!state) throw new NotFoundError('retroaction not found');
  return state;
}
