import type {
  BankSuspension,
  ContentData,
  DomainEvent,
  HashMatchRecord,
  ImageHashRecord,
  ImageJudgement,
  RecordDoc,
  RecordStatus,
  RuleReview,
} from '@vigil/proto';
import { basisFields, type DecisionBasis } from './decision-basis';
import { NotFoundError, ProtectedError } from './errors';
import { rememberCommand, type PendingEvent } from './events';
import { mergeMetadata, type Metadata } from './metadata';

/** A record stream folded: the `records` projection document plus what decisions need. */
export interface RecordState extends RecordDoc {
  /** The rule set version of the last automatic moderation (absent before versions existed). */
  ruleSetVersion?: number;
  /** Ids of the last commands applied to this stream, to apply each command once. */
  recentCommands: string[];
  /** Id of the newest event; the next event's id must sort after it. */
  lastEventId: string;
  /**
   * Command of the newest RecordUpserted. A command re-delivered after a crash between its upsert and its moderation
   * finds its upsert stored here and only moderates.
   */
  upsertCommand?: string;
  /** The reason a human gave for the standing manual status (`manual`), fed back to prompt strategies. */
  manualReason?: string;
  /**
   * The last automatic moderation's flag, while it stands: its rules, its rule set version, and what a person said
   * of it (the next manual decision is counted against it; see docs/rules-safely.md, "Precision").
   */
  flag?: RuleFlag;
  /**
   * The `flag_and_suspend` bank whose match flagged the record, while that flag stands: the record's user is suspended
   * whatever their flagged count (see service/user-reconciliation.ts).
   */
  suspendsUser?: BankSuspension;
}

export interface RuleFlag {
  rules: string[];
  ruleSetVersion: number;
  review?: RuleReview['outcome'];
}

/** The review a person's decision (`confirmed` keeps the flag's harm in place) makes of `flag`, if it changes one. */
export function reviewOf(flag: RuleFlag | undefined, confirmed: boolean): RuleReview | undefined {
  if (!flag || flag.rules.length === 0) return undefined;
  const outcome = confirmed ? 'confirmed' : 'overturned';
  if (flag.review === outcome) return undefined;
  return {
    rules: flag.rules,
    ruleSetVersion: flag.ruleSetVersion,
    outcome,
    ...(flag.review ? { previous: flag.review } : {}),
  };
}

/** A record's own fields as a client sends them (with its user's id once resolved). */
export interface RecordInput {
  clientId: string;
  clientUrl?: string;
  name: string;
  entity: string;
  content: ContentData;
  metadata?: Metadata;
  userId?: string;
}

export interface ModerationOutcome {
  status: RecordStatus;
  reasons: string[];
  rules: string[];
  /** The images the bundled model judged, with their class scores. */
  images?: ImageJudgement[];
  /** The hashes of the images fetched (left out for a passthrough record: see storedOutcome). */
  imageHashes?: ImageHashRecord[];
  /** The images' matches in the tenant's hash banks. */
  hashMatches?: HashMatchRecord[];
}

export type RecordCommand =
  /** Passthrough: name and content are not kept, and the projection forgets older ones. */
  | {
      type: 'UpsertRecord';
      recordId: string;
      input: RecordInput;
      passthrough: boolean;
      commandId?: string;
      /** No moderation follows (roll-out sampling skipped it): the upsert ends its command. */
      endsCommand?: boolean;
    }
  | {
      type: 'ModerateRecord';
      moderationId: string;
      outcome: ModerationOutcome;
      testMode: boolean;
      commandId?: string;
      /** The rule set version that judged it. */
      ruleSetVersion?: number;
      /** What a flag's statement of reasons rests on. */
      basis?: DecisionBasis;
      /** The `flag_and_suspend` bank match in `outcome`, if any: a flag by it suspends the record's user. */
      suspendsUser?: BankSuspension;
    }
  | {
      type: 'ModerateRecordManually';
      moderationId: string;
      status: RecordStatus;
      reason: string;
      actor: string;
      basis?: DecisionBasis;
    }
  | { type: 'DeleteRecord'; commandId?: string };

/**
 * Decides the events of one record command. Automatic moderation of a record whose status a human set is still
 * recorded (its reasons and rules are history worth keeping), but with the human's status: manual decisions are
 * sticky, and the unchanged status means no webhook and no user action follow.
 */
export function decideRecord(state: RecordState | null, command: RecordCommand): PendingEvent[] {
  switch (command.type) {
    case 'UpsertRecord': {
      const { input } = command;
      if (command.commandId !== undefined && state?.upsertCommand === command.commandId) return [];
      return [
        {
          type: 'RecordUpserted',
          data: {
            recordId: command.recordId,
            clientId: input.clientId,
            clientUrl: input.clientUrl ?? state?.clientUrl,
            name: command.passthrough ? undefined : input.name,
            entity: input.entity,
            content: command.passthrough ? undefined : input.content,
            metadata: mergeMetadata(state?.metadata, input.metadata),
            // Omitting the user on a later upsert keeps the link (Iffy).
            userId: input.userId ?? state?.userId,
            passthrough: command.passthrough,
            commandId: command.commandId,
            ...(command.endsCommand && command.commandId !== undefined ? { endsCommand: true as const } : {}),
          },
        },
      ];
    }
    case 'ModerateRecord': {
      const current = live(state);
      const status = current.manual && current.status ? current.status : command.outcome.status;
      return [
        {
          type: 'RecordModerated',
          data: {
            recordId: current._id,
            moderationId: command.moderationId,
            status,
            previousStatus: current.status ?? null,
            via: 'AI',
            reasons: command.outcome.reasons,
            rules: command.outcome.rules,
            ...(command.outcome.images?.length ? { images: command.outcome.images } : {}),
            ...(command.outcome.imageHashes?.length ? { imageHashes: command.outcome.imageHashes } : {}),
            ...(command.outcome.hashMatches?.length ? { hashMatches: command.outcome.hashMatches } : {}),
            testMode: command.testMode,
            userId: current.userId,
            commandId: command.commandId,
            ...(command.ruleSetVersion !== undefined ? { ruleSetVersion: command.ruleSetVersion } : {}),
            ...basisFields(command.basis, status === 'Flagged', true),
            // A bank suspends the user only by its own flag: never over a person's decision on the record.
            ...(command.suspendsUser && status === 'Flagged' && !current.manual
              ? { suspendsUser: command.suspendsUser }
              : {}),
          },
        },
      ];
    }
    case 'ModerateRecordManually': {
      const current = live(state);
      // The same decision again (a form submitted twice, a retried call): it is recorded once.
      if (current.moderationId === command.moderationId) return [];
      if (current.protected && command.status !== 'Compliant') {
        throw new ProtectedError('record is protected', { recordId: current._id });
      }
      const review = reviewOf(current.flag, command.status === 'Flagged');
      return [
        {
          type: 'RecordModerated',
          data: {
            recordId: current._id,
            moderationId: command.moderationId,
            status: command.status,
            previousStatus: current.status ?? null,
            via: 'Manual',
            reasons: command.reason ? [command.reason] : [],
            rules: [],
            testMode: false,
            userId: current.userId,
            actor: command.actor,
            ...basisFields(command.basis, command.status === 'Flagged', true),
            // A person upholding the flag automation set: a partially automated decision.
            ...(command.status === 'Flagged' && current.status === 'Flagged' && !current.manual
              ? { confirmsAutomated: true }
              : {}),
            ...(review ? { review } : {}),
          },
        },
      ];
    }
    case 'DeleteRecord': {
      if (!state) throw new NotFoundError('record not found');
      if (state.deleted) return [];
      return [
        {
          type: 'RecordDeleted',
          data: { recordId: state._id, clientId: state.clientId, commandId: command.commandId },
        },
      ];
    }
  }
}

/** An automatic moderation replaces the standing flag (none when it matched no rule); a manual one reviews it. */
function flagAfter(flag: RuleFlag | undefined, event: Extract<DomainEvent, { type: 'RecordModerated' }>) {
  const { data } = event;
  if (data.via !== 'Manual') {
    return data.rules.length > 0 ? { rules: data.rules, ruleSetVersion: data.ruleSetVersion ?? 0 } : undefined;
  }
  return flag && data.review ? { ...flag, review: data.review.outcome } : flag;
}

function live(state: RecordState | null): RecordState {
  if (!state || state.deleted) throw new NotFoundError('record not found');
  return state;
}

export function evolveRecord(state: RecordState | null, event: DomainEvent): RecordState {
  const at = new Date(event.occurredAt);
  const base = { version: event.version, lastEventId: event.id, updatedAt: at };
  switch (event.type) {
    case 'RecordUpserted': {
      const { data } = event;
      const next: RecordState = {
        _id: data.recordId,
        tenantId: event.tenantId,
        clientId: data.clientId,
        entity: data.entity,
        protected: state?.protected ?? false,
        passthrough: data.passthrough,
        reasons: state?.reasons ?? [],
        rules: state?.rules ?? [],
        manual: state?.manual ?? false,
        testMode: state?.testMode ?? false,
        // A re-ingest brings a deleted record back (Iffy kept it hidden while still moderating it).
        deleted: false,
        sort: state?.sort ?? event.id,
        createdAt: state?.createdAt ?? at,
        // The command is remembered by its RecordModerated, the last event it appends: events are stored without a
        // transaction, so a crash between the two must leave the command to be applied again, not skipped. An upsert
        // that no moderation follows is the last, and remembers it: `upsertCommand` holds only the newest upsert's, so
        // a re-delivered command skipped by the sampling would otherwise be applied again over later changes.
        recentCommands: data.endsCommand
          ? rememberCommand(state?.recentCommands ?? [], data.commandId)
          : (state?.recentCommands ?? []),
        ...base,
      };
      assignDefined(next, {
        clientUrl: data.clientUrl,
        name: data.name,
        content: data.content,
        metadata: data.metadata,
        userId: data.userId,
        upsertCommand: data.commandId,
        status: state?.status,
        statusUpdatedAt: state?.statusUpdatedAt,
        statusUpdatedVia: state?.statusUpdatedVia,
        moderationId: state?.moderationId,
        // The standing human decision's reason outlives a new version of the content, as the decision does.
        manualReason: state?.manualReason,
        flag: state?.flag,
      });
      return next;
    }
    case 'RecordModerated': {
      const current = started(state, event);
      const { data } = event;
      const changed = data.status !== current.status || data.via === 'Manual';
      const manual = data.via === 'Manual' || (current.manual && data.status === current.status);
      // A person's decision stands over this automatic moderation: the record keeps that decision's reason, not the
      // reasons and rules of a verdict that did not decide its status (they stay in the event, its history).
      const overruled = manual && data.via !== 'Manual';
      return {
        ...current,
        ...base,
        status: data.status,
        statusUpdatedAt: changed ? at : current.statusUpdatedAt,
        statusUpdatedVia: changed ? data.via : current.statusUpdatedVia,
        moderationId: data.moderationId,
        reasons: overruled ? (current.manualReason ? [current.manualReason] : []) : data.reasons,
        rules: overruled ? [] : data.rules,
        manual,
        manualReason: data.via === 'Manual' ? data.reasons[0] : manual ? current.manualReason : undefined,
        testMode: data.testMode,
        ruleSetVersion: data.via === 'Manual' ? current.ruleSetVersion : data.ruleSetVersion,
        flag: flagAfter(current.flag, event),
        // A bank's suspending flag stands until an automatic moderation without it or a person's decision against it.
        suspendsUser:
          data.via === 'Manual' ? (data.status === 'Flagged' ? current.suspendsUser : undefined) : data.suspendsUser,
        recentCommands: rememberCommand(current.recentCommands, data.commandId),
        // An automatic moderation that fetched images leaves their hashes; a manual decision keeps those standing.
        ...(data.via !== 'Manual' && data.imageHashes?.length
          ? { imageHashes: data.imageHashes }
          : current.imageHashes
            ? { imageHashes: current.imageHashes }
            : {}),
      };
    }
    case 'RecordDeleted': {
      const current = started(state, event);
      return {
        ...current,
        ...base,
        deleted: true,
        recentCommands: rememberCommand(current.recentCommands, event.data.commandId),
      };
    }
    default:
      throw new Error(`event ${event.type} does not belong to a record stream`);
  }
}

function started<S>(state: S | null, event: DomainEvent): S {
  if (!state) throw new Error(`event ${event.type} at version ${event.version} before the stream started`);
  return state;
}

/** Copies only defined values, so optional fields stay absent rather than `undefined` in stored documents. */
export function assignDefined<T extends object>(target: T, values: Partial<T>): T {
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined) (target as Record<string, unknown>)[key] = value;
  }
  return target;
}
