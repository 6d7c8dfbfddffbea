import { ulid, userIdFor, type DecisionNotice, type UserData, type UserStatus } from '@vigil/proto';
import { LIMITS, checkLength, checkUserBounds } from '../domain/bounds';
import { manualBasis } from '../domain/decision-basis';
import { NotFoundError } from '../domain/errors';
import { validateMetadata } from '../domain/metadata';
import { stageUser } from '../domain/stream';
import type { UserCommand, UserState } from '../domain/user';
import type { UseCases } from './use-cases';

// The decisions on one user (profile, status, appeals), as load → decide → commit (see use-cases.ts).

export async function upsertUser(
  deps: UseCases,
  input: { tenantId: string; user: UserData; correlationId: string },
): Promise<UserState> {
  checkUserBounds(input.user);
  if (input.user.metadata) validateMetadata(input.user.metadata, ['metadata']);
  const userId = userIdFor(input.tenantId, input.user.clientId);
  return onUser(deps, input.tenantId, userId, input.correlationId, {
    type: 'UpsertUser',
    userId,
    input: input.user,
    passthrough: false,
  });
}

export async function setUserStatus(
  deps: UseCases,
  input: {
    tenantId: string;
    userId: string;
    status: UserStatus;
    reason: string;
    actor: string;
    correlationId: string;
    /** The caller's id for this decision (a report's decision names it); a new one by default. */
    actionId?: string;
    /** The policy the decision rests on (the default policy when absent), and the report it answers. */
    policy?: string;
    notice?: DecisionNotice;
  },
): Promise<UserState> {
  checkLength(input.reason, LIMITS.reason, 'reason');
  const { settings } = await deps.tenants.get(input.tenantId);
  return onUser(deps, input.tenantId, input.userId, input.correlationId, {
    type: 'SetUserStatus',
    actionId: input.actionId ?? `act_${ulid()}`,
    status: input.status,
    reason: input.reason,
    actor: input.actor,
    basis: manualBasis(settings, input.policy, input.notice),
  });
}

export async function createAppeal(
  deps: UseCases,
  input: {
    tenantId: string;
    userId: string;
    text: string;
    correlationId: string;
  },
): Promise<string> {
  checkLength(input.text, LIMITS.appealText, 'text');
  const appealId = `apl_${ulid()}`;
  const { settings } = await deps.tenants.get(input.tenantId);
  await onUser(deps, input.tenantId, input.userId, input.correlationId, {
    type: 'CreateAppeal',
    appealId,
    text: input.text,
    windowDays: settings.appealWindowDays,
  });
  return appealId;
}

export async function decideAppeal(
  deps: UseCases,
  input: {
    tenantId: string;
    appealId: string;
    decision: 'Approved' | 'Rejected';
    reason: string;
    actor: string;
    correlationId: string;
  },
): Promise<void> {
  checkLength(input.reason, LIMITS.reason, 'reason');
  const userId = await deps.store.projections.appealUser(input.tenantId, input.appealId);
  if (!userId) throw new NotFoundError('appeal not found');
  await onUser(deps, input.tenantId, userId, input.correlationId, {
    type: 'DecideAppeal',
    appealId: input.appealId,
    decision: input.decision,
    reason: input.reason,
    actor: input.actor,
    actionId: `act_${ulid()}`,
  });
}

async function onUser(
  deps: UseCases,
  tenantId: string,
  userId: string,
  correlationId: string,
  command: UserCommand,
): Promise<UserState> {
  const { store } = deps;
  return deps.writer.retrying(async (fresh) => {
    // Load.
    const user = await store.streams.loadUser(userId, fresh);
    if (user.state && user.state.tenantId !== tenantId) throw new NotFoundError('user not found');
    // Decide.
    const staged = stageUser(user, command, { tenantId, correlationId });
    // Commit.
    await deps.writer.commit(staged);
    return staged.state as UserState;
  });
}
