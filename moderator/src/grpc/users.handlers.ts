import { UserStatus, type ModerationServiceHandlers } from '@vigil/proto';
import { setUserStatus } from '../service/user-decisions';
import { toStoredEvent, toUserMessage } from './mappers';
import { byHuman, listAnswer, oneOf, required, unary, type HandlerDeps } from './unary';

/** Users: read, list, their events, and a person's decision on one's status. */
export function userHandlers(
  deps: HandlerDeps,
): Pick<ModerationServiceHandlers, 'GetUser' | 'ListUsers' | 'GetUserEvents' | 'SetUserStatus'> {
  const { useCases, queries } = deps;
  return {
    GetUser: unary(deps, 'GetUser', async (request, tenantId) =>
      toUserMessage(await queries.getUser(tenantId, required(request.userId, 'user_id'))),
    ),

    ListUsers: unary(deps, 'ListUsers', async (request, tenantId) =>
      listAnswer('users', await queries.listUsers(tenantId, request), toUserMessage),
    ),

    GetUserEvents: unary(deps, 'GetUserEvents', async (request, tenantId) => {
      const events = await queries.getUserEvents(tenantId, required(request.userId, 'user_id'));
      return { events: events.map(toStoredEvent) };
    }),

    SetUserStatus: unary(deps, 'SetUserStatus', async (request, tenantId) => {
      const userId = required(request.userId, 'user_id');
      await setUserStatus(useCases, {
        tenantId,
        userId,
        status: oneOf(UserStatus, request.status, 'status'),
        ...(request.policy ? { policy: request.policy } : {}),
        ...byHuman(request),
      });
      return toUserMessage(await queries.getUser(tenantId, userId));
    }),
  };
}
