import {
  hashPayload,
  nestedUserOf,
  recordPayload,
  reportPayload,
  rulePayload,
  userPayload,
  webhookBody,
  type SubjectView,
  type WebhookTrigger,
} from '../domain/webhook-events';
import type { UpstreamReads } from '../store/upstream-reads';

export type BuiltBody = { kind: 'body'; body: string } | { kind: 'wait' } | { kind: 'unavailable' };

/**
 * The body, from the event's view of its subject when it carries one (no store read, except a record's user that the
 * moderation did not load), else from the projections. The moderator writes a projection just after appending the
 * event, so a fresh event may arrive first: with `mayWait`, a projection behind the event's version means "wait";
 * without, the body is built from what is there (the status fields come from the event anyway). Its `timestamp` is
 * the event's time, so a body built again from the same view (an event read again after a notifier sent its webhook
 * and stopped before storing it) is the same bytes.
 */
export async function buildBody(
  store: Pick<UpstreamReads, 'record' | 'user'>,
  trigger: WebhookTrigger,
  { mayWait, view }: { mayWait: boolean; view?: SubjectView },
): Promise<BuiltBody> {
  if (trigger.kind === 'report') {
    return { kind: 'body', body: webhookBody(trigger, reportPayload(trigger), trigger.at) };
  }
  if (trigger.kind === 'rule') {
    return { kind: 'body', body: webhookBody(trigger, rulePayload(trigger), trigger.at) };
  }
  if (trigger.kind === 'hash') {
    return { kind: 'body', body: webhookBody(trigger, hashPayload(trigger), trigger.at) };
  }
  if (trigger.kind === 'record') {
    if (view?.kind === 'record') {
      const { user: nested, ...fields } = view.record;
      const userId = trigger.userId;
      const user = !userId ? null : nested ? nestedUserOf(userId, nested) : await store.user(trigger.tenantId, userId);
      const record = { _id: trigger.recordId, ...fields };
      return { kind: 'body', body: webhookBody(trigger, recordPayload(trigger, record, user), trigger.at) };
    }
    const record = await store.record(trigger.tenantId, trigger.recordId);
    if (!record || record.version < trigger.version) {
      if (mayWait) return { kind: 'wait' };
      if (!record) return { kind: 'unavailable' };
    }
    const userId = record.userId ?? trigger.userId;
    const user = userId ? await store.user(trigger.tenantId, userId) : null;
    return { kind: 'body', body: webhookBody(trigger, recordPayload(trigger, record, user), trigger.at) };
  }
  if (view?.kind === 'user') {
    const user = { _id: trigger.userId, ...view.user };
    return { kind: 'body', body: webhookBody(trigger, userPayload(trigger, user), trigger.at) };
  }
  const user = await store.user(trigger.tenantId, trigger.userId);
  if (!user || user.version < trigger.version) {
    if (mayWait) return { kind: 'wait' };
    if (!user) return { kind: 'unavailable' };
  }
  return { kind: 'body', body: webhookBody(trigger, userPayload(trigger, user), trigger.at) };
}
