import { COLLECTIONS, type EndpointStateDoc, type WebhookEndpointDoc } from '@vigil/proto';
import type { Collection, Db } from 'mongodb';
import { upsertById } from './insert-new';

/**
 * Collection `endpoint_states`, written by the notifier only: each webhook endpoint's health (a failing streak, the
 * last success, disabled by the notifier), apart from the gateway's `webhook_endpoints`, which the notifier only reads.
 */
export class EndpointStateStore {
  private readonly states: Collection<EndpointStateDoc>;

  constructor(db: Db) {
    this.states = db.collection(COLLECTIONS.endpointStates);
  }

  endpointState(endpointId: string): Promise<EndpointStateDoc | null> {
    return this.states.findOne({ _id: endpointId });
  }

  /** Whether the notifier disabled the endpoint (reads only that field). */
  async isDisabled(endpointId: string): Promise<boolean> {
    const state = await this.states.findOne({ _id: endpointId }, { projection: { disabledAt: 1 } });
    return Boolean(state?.disabledAt);
  }

  /** Clears a failing streak; `lastSuccessAt` is refreshed at most once a minute to spare a write per delivery. */
  async endpointSucceeded(
    endpoint: WebhookEndpointDoc,
    state: EndpointStateDoc | null,
    now: Date,
  ): Promise<Partial<EndpointStateDoc> | undefined> {
    const fresh = state?.lastSuccessAt && now.getTime() - state.lastSuccessAt.getTime() < 60000;
    if (fresh && !state.failingSince) return undefined;
    await upsertById(this.states, endpoint._id, {
      $set: { tenantId: endpoint.tenantId, lastSuccessAt: now },
      $unset: { failingSince: '' },
    });
    return { lastSuccessAt: now };
  }

  /** Notes a failure; returns since when the endpoint has been failing without a success. */
  async endpointFailed(endpoint: WebhookEndpointDoc, now: Date): Promise<Date> {
    const state = await this.states.findOne({ _id: endpoint._id });
    if (state?.failingSince) return state.failingSince;
    await upsertById(this.states, endpoint._id, { $set: { tenantId: endpoint.tenantId, failingSince: now } });
    return now;
  }

  async disableEndpoint(
    endpoint: WebhookEndpointDoc,
    reason: 'gone' | 'failing',
    now: Date,
  ): Promise<Partial<EndpointStateDoc>> {
    const fields = { disabledAt: now, disabledReason: reason };
    await upsertById(this.states, endpoint._id, { $set: { tenantId: endpoint.tenantId, ...fields } });
    return fields;
  }

  async enableEndpoint(tenantId: string, endpointId: string): Promise<boolean> {
    const result = await this.states.updateOne(
      { _id: endpointId, tenantId },
      { $unset: { disabledAt: '', disabledReason: '', failingSince: '' } },
    );
    return result.matchedCount === 1;
  }
}
