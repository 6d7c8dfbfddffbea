import type { RetroactionState } from '../store/retroaction-store';
import type { UseCaseDeps } from './deps';
import { retroactionOf } from './get-retroaction';

/** Cancels a retroaction of the tenant: it stops after its current batch (records already moderated stay so). */
export async function cancelRetroaction(
  deps: Pick<UseCaseDeps, 'retroactions'>,
  tenantId: string,
  id: string,
): Promise<RetroactionState> {
  return deps.retroactions.cancel(await retroactionOf(deps, tenantId, id));
}
