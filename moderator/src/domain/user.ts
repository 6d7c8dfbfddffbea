import {
  isHumanVia,
  type BankSuspension,
  type AppealStatus,
  type DomainEvent,
  type EventOf,
  type UserData,
  type UserDoc,
  type UserStatus,
  type Via,
} from '@vigil/proto';
import { basisFields, type DecisionBasis } from './decision-basis';
import { ConflictError, FailedPreconditionError, NotFoundError, ProtectedError } from './errors';
import type { PendingEvent } from './events';
import { mergeMetadata } from './metadata';
import { assignDefined, reviewOf, type RuleFlag } from './record';

/**
 * A user stream folded: the `users` projection document plus the user's appeals, so that "one open appeal per user" is
 * decided on one stream. (The flagged count is counted from the records and stored beside it.)
 */
export interface UserState extends UserDoc {
  /** `against`: the `statusVersion` of the decision appealed (absent in snapshots written before it was kept). */
  appeals: { id: string; status: AppealStatus; against?: number }[];
  /** Stream version of the last status change: which decision an appeal is against. */
  statusVersion?: number;
  /**
   * The flag behind the standing automatic suspension (the rules of the record that caused it), and what a person said
   * of it: a person's decision on the user is counted against those rules (docs/rules-safely.md, "Precision").
   */
  autoFlag?: RuleFlag | null;
  lastEventId: string;
}

export type UserCommand =
  /**
   * Passthrough: email, name and username of this call are not kept (earlier ones stay). `at`: where the user sits in
   * the request, for errors (a record's user: `['user']`; a user sent alone: none).
   */
  | { type: 'UpsertUser'; userId: string; input: UserData; passthrough: boolean; at?: readonly string[] }
  | {
      type: 'SetUserStatus';
      actionId: string;
      status: UserStatus;
      reason: string;
      actor: string;
      /** What a suspension's or ban's statement of reasons rests on. */
      basis?: DecisionBasis;
    }
  /** Automation after a record's flagged status changed: suspend at the threshold, reinstate below it. */
  | {
      type: 'ReconcileUser';
      actionId: string;
      flaggedCount: number;
      threshold: number;
      viaRecordId?: string;
      /** The flag of `viaRecordId` (its rules and version), kept with a suspension it causes. */
      viaFlag?: RuleFlag | null;
      /**
       * One of the user's flagged records whose flag came from a `flag_and_suspend` bank: reason enough to suspend,
       * whatever `flaggedCount`, and no reinstatement while it stands.
       */
      bankSuspension?: RecordBankSuspension;
    }
  /** `windowDays`: how long after the decision an appeal is taken (Art. 20(1) DSA: at least six months). */
  | { type: 'CreateAppeal'; appealId: string; text: string; windowDays?: number; at?: Date }
  | {
      type: 'DecideAppeal';
      appealId: string;
      decision: 'Approved' | 'Rejected';
      reason: string;
      actor: string;
      actionId: string;
    };

/** A user's flagged record (`recordId`) whose flag came from a `flag_and_suspend` bank. */
export type RecordBankSuspension = BankSuspension & { recordId: string };

/** The reason of a suspension by a bank's match: it names the bank (never the hash's metadata). */
function bankSuspensionReason(bank: Pick<BankSuspension, 'bankId' | 'bankName'>): string {
  return `Matched hash bank "${bank.bankName}" (${bank.bankId}), whose action suspends the user`;
}

export function decideUser(state: UserState | null, command: UserCommand): PendingEvent[] {
  switch (command.type) {
    case 'UpsertUser': {
      const { input } = command;
      const keep = !command.passthrough;
      const data = {
        userId: command.userId,
        clientId: input.clientId,
        clientUrl: input.clientUrl ?? state?.clientUrl,
        paymentsAccountId: input.paymentsAccountId ?? state?.paymentsAccountId,
        email: (keep ? input.email : undefined) ?? state?.email,
        name: (keep ? input.name : undefined) ?? state?.name,
        username: (keep ? input.username : undefined) ?? state?.username,
        // Applied on creation only, as Iffy does: a later ingest cannot unprotect a user by omission or mistake.
        protected: state ? state.protected : (input.protected ?? false),
        metadata: mergeMetadata(state?.metadata, input.metadata, [...(command.at ?? []), 'metadata']),
        passthrough: command.passthrough,
      };
      if (state && unchanged(state, data)) return [];
      return [{ type: 'UserUpserted', data }];
    }
    case 'SetUserStatus': {
      const current = existing(state);
      if (current.protected && command.status !== 'Compliant') {
        throw new ProtectedError('user is protected', { userId: current._id });
      }
      // The status a person already gave changes nothing. The status automation gave is confirmed by hand: recorded as a
      // decision (same status, via Manual), so that automation no longer moves it.
      if (current.status === command.status && current.manual) return [];
      const review = reviewOf(current.autoFlag ?? undefined, command.status !== 'Compliant');
      return [
        statusChanged(current, command.actionId, command.status, 'Manual', {
          reason: command.reason,
          actor: command.actor,
          ...basisFields(command.basis, command.status !== 'Compliant', false),
          // A person upholding the status automation set: a partially automated decision.
          ...(command.status !== 'Compliant' && current.status === command.status ? { confirmsAutomated: true } : {}),
          ...(review ? { review } : {}),
        }),
        ...appealFollowUps(current, command.status),
      ];
    }
    case 'ReconcileUser': {
      const current = existing(state);
      if (current.protected || current.manual) return [];
      const bank = command.bankSuspension;
      const overThreshold = command.flaggedCount >= command.threshold;
      const over = overThreshold || bank !== undefined;
      if (over && (current.status === undefined || current.status === 'Compliant')) {
        // Under the threshold, the bank's flag is the cause: its record, its reason and its policy's grounds.
        const byBank = bank && (!overThreshold || bank.recordId === command.viaRecordId) ? bank : undefined;
        const viaRecordId = byBank?.recordId ?? command.viaRecordId;
        return [
          statusChanged(current, command.actionId, 'Suspended', 'Automation Flagged Record', {
            viaRecordId,
            ...(byBank ? { reason: bankSuspensionReason(byBank) } : {}),
            ...(byBank?.grounds ? { grounds: byBank.grounds } : {}),
            ...(command.viaFlag?.rules.length && viaRecordId === command.viaRecordId
              ? { rules: command.viaFlag.rules, ruleSetVersion: command.viaFlag.ruleSetVersion }
              : {}),
          }),
        ];
      }
      if (!over && current.status === 'Suspended') {
        return [
          statusChanged(current, command.actionId, 'Compliant', 'Automation All Compliant', {
            viaRecordId: command.viaRecordId,
          }),
          ...appealFollowUps(current, 'Compliant'),
        ];
      }
      return [];
    }
    case 'CreateAppeal': {
      const current = existing(state);
      if (current.status !== 'Suspended' && current.status !== 'Banned') {
        throw new FailedPreconditionError('only a suspended or banned user can appeal', { userId: current._id });
      }
      const decidedAt = current.statusUpdatedAt ? new Date(current.statusUpdatedAt).getTime() : undefined;
      if (
        command.windowDays !== undefined &&
        decidedAt !== undefined &&
        (command.at ?? new Date()).getTime() - decidedAt > command.windowDays * 86_400_000
      ) {
        throw new FailedPreconditionError('the appeal window of this decision has closed', {
          userId: current._id,
          windowDays: command.windowDays,
        });
      }
      if (current.appeals.some((appeal) => appeal.status === 'Open')) {
        throw new ConflictError('the user already has an open appeal', { userId: current._id });
      }
      // One appeal per decision, as the appeal page says: a rejected appeal is not filed again until the status changes.
      const decision = current.statusVersion;
      if (decision !== undefined && current.appeals.some((appeal) => appeal.against === decision)) {
        throw new ConflictError('the user already appealed this decision', { userId: current._id });
      }
      return [{ type: 'AppealCreated', data: { appealId: command.appealId, userId: current._id, text: command.text } }];
    }
    case 'DecideAppeal': {
      const current = existing(state);
      const appeal = current.appeals.find((candidate) => candidate.id === command.appealId);
      if (!appeal) throw new NotFoundError('appeal not found');
      if (appeal.status === command.decision) return [];
      if (appeal.status !== 'Open') {
        throw new ConflictError(`the appeal is already ${appeal.status}`, { appealId: appeal.id });
      }
      const rejected = command.decision === 'Rejected' || current.status === 'Compliant';
      // A person upholding the suspension confirms its flag; granting the appeal overturns it (on the status change).
      const review = reviewOf(current.autoFlag ?? undefined, command.decision === 'Rejected');
      const decided: PendingEvent = {
        type: 'AppealDecided',
        data: {
          appealId: appeal.id,
          userId: current._id,
          status: command.decision,
          via: 'Manual',
          reason: command.reason || undefined,
          actor: command.actor || undefined,
          ...(review && command.decision === 'Rejected' ? { review } : {}),
        },
      };
      if (rejected) return [decided];
      return [
        decided,
        statusChanged(current, command.actionId, 'Compliant', 'Automation Appeal Approved', {
          viaAppealId: appeal.id,
          actor: command.actor || undefined,
          ...(review ? { review } : {}),
        }),
      ];
    }
  }
}

function existing(state: UserState | null): UserState {
  if (!state) throw new NotFoundError('user not found');
  return state;
}

function unchanged(state: UserState, data: Extract<PendingEvent, { type: 'UserUpserted' }>['data']): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return (
    state.clientUrl === data.clientUrl &&
    state.paymentsAccountId === data.paymentsAccountId &&
    state.email === data.email &&
    state.name === data.name &&
    state.username === data.username &&
    state.protected === data.protected &&
    same(state.metadata, data.metadata)
  );
}

function statusChanged(
  state: UserState,
  actionId: string,
  status: UserStatus,
  via: Via,
  extra: Omit<Partial<EventOf<'UserStatusChanged'>['data']>, 'userId' | 'actionId' | 'status' | 'via'>,
): PendingEvent {
  // A suspension or ban pauses the payouts of a user with a payments account (the notifier's payment actions).
  const payouts = status !== 'Compliant' && state.paymentsAccountId !== undefined;
  return {
    type: 'UserStatusChanged',
    data: {
      userId: state._id,
      actionId,
      status,
      previousStatus: state.status ?? null,
      via,
      testMode: false,
      ...extra,
      ...(payouts ? { payouts: true } : {}),
    },
  };
}

/** Compliant grants the user's open appeals, Banned rejects them (Iffy's follow-ups). */
function appealFollowUps(state: UserState, status: UserStatus): PendingEvent[] {
  if (status === 'Suspended') return [];
  const decision = status === 'Compliant' ? 'Approved' : 'Rejected';
  return state.appeals
    .filter((appeal) => appeal.status === 'Open')
    .map((appeal) => ({
      type: 'AppealDecided',
      data: { appealId: appeal.id, userId: state._id, status: decision, via: 'Automation' },
    }));
}

export function evolveUser(state: UserState | null, event: DomainEvent): UserState {
  const at = new Date(event.occurredAt);
  const base = { version: event.version, lastEventId: event.id, updatedAt: at };
  switch (event.type) {
    case 'UserUpserted': {
      const { data } = event;
      const next: UserState = {
        _id: data.userId,
        tenantId: event.tenantId,
        clientId: data.clientId,
        protected: data.protected,
        manual: state?.manual ?? false,
        sort: state?.sort ?? event.id,
        createdAt: state?.createdAt ?? at,
        appeals: state?.appeals ?? [],
        ...base,
      };
      return assignDefined(next, {
        clientUrl: data.clientUrl,
        paymentsAccountId: data.paymentsAccountId,
        email: data.email,
        name: data.name,
        username: data.username,
        metadata: data.metadata,
        status: state?.status,
        statusUpdatedAt: state?.statusUpdatedAt,
        statusUpdatedVia: state?.statusUpdatedVia,
        statusVersion: state?.statusVersion,
        autoFlag: state?.autoFlag,
      });
    }
    case 'UserStatusChanged': {
      const current = started(state, event);
      return {
        ...current,
        ...base,
        status: event.data.status,
        statusUpdatedAt: at,
        statusUpdatedVia: event.data.via,
        statusVersion: event.version,
        manual: isHumanVia(event.data.via),
        autoFlag: autoFlagAfter(current.autoFlag, event.data),
      };
    }
    case 'AppealCreated': {
      const current = started(state, event);
      const appeal = { id: event.data.appealId, status: 'Open' as const, against: current.statusVersion };
      return { ...current, ...base, appeals: [...current.appeals, appeal] };
    }
    case 'AppealDecided': {
      const current = started(state, event);
      const appeals = current.appeals.map((appeal) =>
        appeal.id === event.data.appealId ? { ...appeal, status: event.data.status } : appeal,
      );
      const review = event.data.review;
      const autoFlag = review && current.autoFlag ? { ...current.autoFlag, review: review.outcome } : current.autoFlag;
      return { ...current, ...base, appeals, autoFlag };
    }
    default:
      throw new Error(`event ${event.type} does not belong to a user stream`);
  }
}

/**
 * An automatic suspension keeps the flag that caused it; automation reinstating the user ends it; a person's decision
 * records their review of it.
 */
function autoFlagAfter(
  flag: RuleFlag | null | undefined,
  data: Extract<DomainEvent, { type: 'UserStatusChanged' }>['data'],
): RuleFlag | null | undefined {
  if (data.via === 'Automation Flagged Record') {
    return data.rules?.length ? { rules: data.rules, ruleSetVersion: data.ruleSetVersion ?? 0 } : null;
  }
  if (data.via === 'Automation All Compliant') return null;
  return flag && data.review ? { ...flag, review: data.review.outcome } : flag;
}

function started<S>(state: S | null, event: DomainEvent): S {
  if (!state) throw new Error(`event ${event.type} at version ${event.version} before the stream started`);
  return state;
}
