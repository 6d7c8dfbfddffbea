import {
  monotonicUlid,
  type DomainEvent,
  type WebhookNestedUser,
  type WebhookRecordView,
  type WebhookUserView,
} from '@vigil/proto';
import { decodeTime } from 'ulid';
import { withEnvelope, type PendingEvent } from './events';
import { decideRecord, evolveRecord, type RecordCommand, type RecordState } from './record';
import { decideReport, evolveReport, type ReportCommand, type ReportState } from './report';
import { decideUser, evolveUser, type UserCommand, type UserState } from './user';

export type StreamKind = 'record' | 'user' | 'report';

/**
 * A stream as loaded, or with events decided on it: its folded state (null before its first event), the events read
 * past the snapshot, and the new events not yet committed (none when only loaded).
 */
export interface Loaded<S> {
  kind: StreamKind;
  stream: string;
  state: S | null;
  /** Events newer than the projection snapshot; they still have to be projected. */
  tail: DomainEvent[];
  /** New events decided on this stream, to commit. */
  events: DomainEvent[];
  /** The stream had no projection when loaded: committing inserts it rather than replacing it. */
  created: boolean;
  /**
   * A user stream: the flagged count its staged decision rests on. Committing stores it before the events, so that a
   * reader that sees the new status also sees the count behind it.
   */
  flaggedCount?: number;
}

/** A stream with the events decided on it, ready to commit, and the state after them. */
export type Staged<S> = Loaded<S>;

/** Who asked: stamped on every event's envelope. */
export interface StageContext {
  tenantId: string;
  correlationId: string;
}

const newUlid = monotonicUlid();

/**
 * Gives pending events their envelopes (next versions, ids after the stream's newest) and folds them, after any
 * events already staged on `loaded`.
 */
function stage<S extends { version: number; lastEventId: string }>(
  loaded: Loaded<S>,
  pending: PendingEvent[],
  context: StageContext,
  evolve: (state: S | null, event: DomainEvent) => S,
): Staged<S> {
  let state = loaded.state;
  const events: DomainEvent[] = [...loaded.events];
  for (const event of pending) {
    // Relay order is `_id` order, so an event must sort after its stream's previous one even if this host's clock
    // is behind the host that wrote that one.
    const floor = state ? decodeTime(state.lastEventId) : 0;
    const id = newUlid(Math.max(Date.now(), floor + 1));
    const stamped = withEnvelope(event, {
      id,
      tenantId: context.tenantId,
      stream: loaded.stream,
      version: (state?.version ?? 0) + 1,
      occurredAt: new Date(decodeTime(id)).toISOString(),
      correlationId: context.correlationId,
    });
    events.push(stamped);
    state = evolve(state, stamped);
  }
  return { ...loaded, events, state };
}

/**
 * Decides one command on a record stream (as loaded, or with earlier commands staged) and stages its events. A
 * moderation carries the record's webhook view (and its user's, when `user` is the record's user as loaded or staged
 * in the same use case), so the notifier needs no projection read to build the webhook.
 */
export function stageRecord(
  record: Loaded<RecordState>,
  command: RecordCommand,
  context: StageContext,
  user?: UserState | null,
): Staged<RecordState> {
  const staged = stage(record, decideRecord(record.state, command), context, evolveRecord);
  return withViews(record, staged, 'RecordModerated', (state) => recordView(state, user));
}

/** Decides one command on a user stream and stages its events; a status change carries the user's webhook view. */
export function stageUser(user: Loaded<UserState>, command: UserCommand, context: StageContext): Staged<UserState> {
  const staged = stage(user, decideUser(user.state, command), context, evolveUser);
  return withViews(user, staged, 'UserStatusChanged', userView);
}

/** Decides one command on a report stream and stages its events. */
export function stageReport(
  report: Loaded<ReportState>,
  command: ReportCommand,
  context: StageContext,
): Staged<ReportState> {
  return stage(report, decideReport(report.state, command), context, evolveReport);
}

/** Puts `view` of the state after staging on the events of `type` that staging added to `loaded`. */
function withViews<S>(
  loaded: Loaded<S>,
  staged: Staged<S>,
  type: 'RecordModerated' | 'UserStatusChanged',
  view: (state: S) => WebhookRecordView | WebhookUserView,
): Staged<S> {
  const state = staged.state;
  if (!state) return staged;
  const events = staged.events.map((event, index) =>
    index >= loaded.events.length && event.type === type
      ? ({ ...event, data: { ...event.data, view: view(state) } } as DomainEvent)
      : event,
  );
  return { ...staged, events };
}

/** What a webhook shows of a user (the fields of Iffy's payload that the projection holds). */
function userView(user: UserState): WebhookUserView {
  return { clientId: user.clientId, clientUrl: user.clientUrl, protected: user.protected, metadata: user.metadata };
}

/** What a record webhook shows of the record, with its user when `user` is that user. */
function recordView(record: RecordState, user?: UserState | null): WebhookRecordView {
  const nested: WebhookNestedUser | undefined =
    user && record.userId === user._id
      ? { ...userView(user), status: user.status, statusUpdatedAt: user.statusUpdatedAt?.toISOString() }
      : undefined;
  return {
    clientId: record.clientId,
    clientUrl: record.clientUrl,
    name: record.name,
    entity: record.entity,
    protected: record.protected,
    metadata: record.metadata,
    user: nested,
  };
}
