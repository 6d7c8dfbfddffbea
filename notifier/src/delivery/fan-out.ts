import {
  statementOf,
  type DomainEvent,
  type StatementContext,
  type TenantVersions,
  type WebhookEndpointDoc,
} from '@vigil/proto';
import type { Logger } from 'pino';
import {
  deliveryIdOf,
  subscribes,
  triggerOf,
  webhookIdOf,
  type SubjectView,
  type WebhookTrigger,
} from '../domain/webhook-events';
import { isFirstRead } from '../kafka/first-read';
import { newDelivery, type DeliveryDoc } from '../store/delivery-store';
import type { UpstreamReads } from '../store/upstream-reads';
import type { DeliveryIntake } from './delivery-intake';
import type { EndpointCache } from './endpoint-cache';
import { buildBody, type BuiltBody } from './payload';

/** Webhook bodies of one batch built at once (those of events without a view read the record and maybe its user). */
const BODY_READS_AT_ONCE = 16;

export interface FanOutOptions {
  endpoints: EndpointCache;
  /** The tenants' configuration versions seen on events (shared with `endpoints`). */
  versions: TenantVersions;
  /** The projections webhook bodies are built from. */
  reads: UpstreamReads;
  intake: Pick<DeliveryIntake, 'take'>;
  /** What a tenant's statements of reasons say of redress (its appeal window); absent, webhooks carry none. */
  statementContext?: (tenantId: string) => Promise<StatementContext>;
}

/** An event that makes a webhook, and the endpoints subscribed to it. */
interface Wanted {
  event: DomainEvent;
  trigger: WebhookTrigger;
  view?: SubjectView;
  endpoints: WebhookEndpointDoc[];
}

/**
 * Turns a batch of events into deliveries, one per (webhook event, subscribed endpoint), in named steps: select the
 * events that make a webhook and their endpoints, build their bodies, then take the deliveries in (DeliveryIntake).
 * Idempotent: deliveries have ids derived from (event, endpoint), so a batch handled again inserts nothing new.
 */
export class FanOut {
  constructor(private readonly options: FanOutOptions) {}

  async handle(events: DomainEvent[], log: Logger): Promise<void> {
    const wanted = await this.select(events, log);
    const built = await this.buildBodies(wanted);
    const { docs, fresh } = this.deliveries(wanted, built);
    if (docs.length === 0) return;
    const { inserted, sentFirst } = await this.options.intake.take(docs, fresh);
    // Those sent first are stored after the batch (DeliveryIntake.later).
    log.info({ deliveries: docs.length, inserted: inserted.size, sentFirst: sentFirst.size }, 'deliveries created');
  }

  /** The events that make a webhook, each with the tenant's endpoints subscribed to it and its statement of reasons. */
  private async select(events: DomainEvent[], log: Logger): Promise<Wanted[]> {
    const endpointsOf = new Map<string, Promise<WebhookEndpointDoc[]>>();
    const statementContexts = new Map<string, Promise<StatementContext>>();
    const wanted: Wanted[] = [];
    for (const event of events) {
      // An event of a request that started after a change to the tenant's endpoints carries that change's version (or
      // a newer one): the tenant's endpoints are read again before it fans out.
      if (this.options.versions.observe(event.tenantId, event.configVersion)) endpointsOf.delete(event.tenantId);
      const decision = triggerOf(event);
      if (decision.kind === 'none') continue;
      if (decision.kind === 'test_mode') {
        log.info(
          { eventId: event.id, subjectId: decision.subjectId, tenantId: event.tenantId },
          'webhook skipped: test mode',
        );
        continue;
      }
      const { trigger, view } = decision;
      if (!endpointsOf.has(event.tenantId)) {
        endpointsOf.set(event.tenantId, this.options.endpoints.active(event.tenantId));
      }
      const endpoints = (await endpointsOf.get(event.tenantId)!).filter((endpoint) =>
        subscribes(endpoint.events, trigger.event),
      );
      if (endpoints.length === 0) {
        log.debug({ eventId: event.id, tenantId: event.tenantId }, 'webhook has no endpoint');
        continue;
      }
      await this.attachStatement(event, trigger, statementContexts);
      wanted.push({ event, trigger, view, endpoints });
    }
    return wanted;
  }

  /** The statement of reasons of a restricting (or lifting) decision goes into its webhook. */
  private async attachStatement(
    event: DomainEvent,
    trigger: WebhookTrigger,
    contexts: Map<string, Promise<StatementContext>>,
  ): Promise<void> {
    const contextOf = this.options.statementContext;
    if (!contextOf || trigger.kind === 'report' || trigger.kind === 'rule' || trigger.kind === 'hash') return;
    if (!contexts.has(event.tenantId)) contexts.set(event.tenantId, contextOf(event.tenantId));
    const statement = statementOf(event, await contexts.get(event.tenantId)!);
    if (statement) trigger.statement = statement;
  }

  /**
   * The bodies, from the events' views (no read) or, for events without one, from the projections, which are usually
   * there already (their reads concurrently, a few at a time): the scheduler is spared a write each.
   */
  private async buildBodies(wanted: Wanted[]): Promise<BuiltBody[]> {
    const built: BuiltBody[] = [];
    for (let from = 0; from < wanted.length; from += BODY_READS_AT_ONCE) {
      const slice = wanted.slice(from, from + BODY_READS_AT_ONCE);
      built.push(
        ...(await Promise.all(
          slice.map(({ trigger, view }) => buildBody(this.options.reads, trigger, { mayWait: true, view })),
        )),
      );
    }
    return built;
  }

  /**
   * One delivery per (event, endpoint); the same event twice in one batch (a re-publish) is one delivery. `fresh`:
   * those whose event every copy of which was read for the first time (see `isFirstRead`).
   */
  private deliveries(wanted: Wanted[], built: BuiltBody[]): { docs: DeliveryDoc[]; fresh: Set<string> } {
    const now = new Date();
    const docs = new Map<string, DeliveryDoc>();
    const fresh = new Set<string>();
    const repeated = new Set<string>();
    wanted.forEach(({ event, trigger, endpoints }, index) => {
      const body = built[index];
      const webhookId = webhookIdOf(event.id);
      for (const endpoint of endpoints) {
        const doc = newDelivery(
          {
            _id: deliveryIdOf(event.id, endpoint._id),
            tenantId: event.tenantId,
            endpointId: endpoint._id,
            webhookId,
            eventId: event.id,
            event: trigger.event,
            subjectId: trigger.subjectId,
            trigger,
            ...(body?.kind === 'body' ? { body: body.body } : {}),
          },
          now,
        );
        docs.set(doc._id, doc);
        if (isFirstRead(event)) fresh.add(doc._id);
        else repeated.add(doc._id);
      }
    });
    for (const id of repeated) fresh.delete(id);
    return { docs: [...docs.values()], fresh };
  }
}
