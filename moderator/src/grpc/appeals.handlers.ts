import type { ModerationServiceHandlers } from '@vigil/proto';
import { ValidationError } from '../domain/errors';
import { createAppeal, decideAppeal } from '../service/user-decisions';
import { toAppealMessage } from './mappers';
import { byHuman, correlation, listAnswer, required, unary, type HandlerDeps } from './unary';

/** Appeals: a user's appeal against a restriction, the list, and a person's decision on one. */
export function appealHandlers(
  deps: HandlerDeps,
): Pick<ModerationServiceHandlers, 'CreateAppeal' | 'ListAppeals' | 'DecideAppeal'> {
  const { useCases, queries } = deps;
  return {
    CreateAppeal: unary(deps, 'CreateAppeal', async (request, tenantId) => {
      const text = required(request.text, 'text');
      if (text.length > 1000) throw new ValidationError('text must be at most 1000 characters', { path: 'text' });
      const appealId = await createAppeal(useCases, {
        tenantId,
        userId: required(request.userId, 'user_id'),
        text,
        correlationId: correlation(),
      });
      return toAppealMessage(await queries.getAppeal(tenantId, appealId));
    }),

    ListAppeals: unary(deps, 'ListAppeals', async (request, tenantId) =>
      listAnswer('appeals', await queries.listAppeals(tenantId, request), toAppealMessage),
    ),

    DecideAppeal: unary(deps, 'DecideAppeal', async (request, tenantId) => {
      const appealId = required(request.appealId, 'appeal_id');
      if (request.decision !== 'Approved' && request.decision !== 'Rejected') {
        throw new ValidationError('decision must be Approved or Rejected', { path: 'decision' });
      }
      await decideAppeal(useCases, {
        tenantId,
        appealId,
        decision: request.decision,
        ...byHuman(request),
      });
      return toAppealMessage(await queries.getAppeal(tenantId, appealId));
    }),
  };
}
