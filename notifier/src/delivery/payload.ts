import { recordPayload, userPayload, webhookBody, type WebhookTrigger } from '../domain/webhook-events';
import type { DeliveryStore } from '../store/delivery-store';

/**
 * The document if it belongs to the tenant. Looked up by `_id` alone and checked here: FerretDB v1 answers any other
 * filter with a scan of the whole collection, and this runs once per webhook.
 */
function ownedBy<T extends { tenantId: string }>(doc: T | null, tenantId: string): T | null {
  return doc && doc.tenantId === tenantId ? doc : null;
}

export type BuiltBody = { kind: 'body'; body: string } | { kind: 'wait' } | { kind: 'unavailable' };

/**
 * The body from the projections. The moderator writes a projection just after appending the event, so a fresh event
 * may arrive first: with `mayWait`, a projection behind the event's version means "wait"; without, the body is built
 * from what is there (the status fields come from the event anyway).
 */
export async function buildBody(
  store: DeliveryStore,
  trigger: WebhookTrigger,
  { mayWait }: { mayWait: boolean },
): Promise<BuiltBody> {
  if (trigger.kind === 'record') {
    const record = ownedBy(await store.records.findOne({ _id: trigger.recordId }), trigger.tenantId);
    if (!record || record.version < trigger.version) {
      if (mayWait) return { kind: 'wait' };
      if (!record) return { kind: 'unavailable' };
    }
    const userId = record.userId ?? trigger.userId;
    const user = userId ? ownedBy(await store.users.findOne({ _id: userId }), trigger.tenantId) : null;
    return { kind: 'body', body: webhookBody(trigger, recordPayload(trigger, record, user), new Date()) };
  }
  const user = ownedBy(await store.users.findOne({ _id: trigger.userId }), trigger.tenantId);
  if (!user || user.version < trigger.version) {
    if (mayWait) return { kind: 'wait' };
    if (!user) return { kind: 'unavailable' };
  }
  return { kind: 'body', body: webhookBody(trigger, userPayload(trigger, user), new Date()) };
}
