import {
  statementOf,
  type StatementContext,
  BatchHeartbeat,
  DomainEvent,
  HEADERS,
  WebhookCommand,
  consumerTimingOptions,
  type ConsumerMetrics,
  type ConsumerTiming,
  type TenantVersions,
  type Topics,
  type WebhookEndpointDoc,
} from '@vigil/proto';
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from 'pino';
import { buildBody, type BuiltBody } from '../delivery/payload';
import {
  deliveryIdOf,
  subscribes,
  triggerOf,
  webhookIdOf,
  type SubjectView,
  type WebhookTrigger,
} from '../domain/webhook-events';
import { OffsetCommits, retry } from '@vigil/proto/platform';
import { AppError } from '../errors';
import type { DeadLetterStore, EventDeadLetter } from '../store/dead-letter-store';
import type { EndpointCache } from '../delivery/endpoint-cache';
import { newDelivery, type DeliveryDoc, type DeliveryStore, type LeaseHolder } from '../store/delivery-store';
import type { EndpointStateStore } from '../store/endpoint-states';
import type { UpstreamReads } from '../store/upstream-reads';
import { fromStore } from '../store/store-errors';

/** Webhook bodies of one batch built at once (those of events without a view read the record and maybe its user). */
const BODY_READS_AT_ONCE = 16;
/** Failed attempts of a batch before its messages are handled one by one and the failing ones set aside. */
const ISOLATE_AFTER_ATTEMPTS = 5;

export interface EventsConsumerOptions {
  kafka: Kafka;
  groupId: string;
  /** Session, heartbeat and rebalance timeouts of the group membership. */
  timing: ConsumerTiming;
  /** Lag, assignment, rebalances and liveness of the group membership, from kafkajs' events. */
  metrics?: ConsumerMetrics;
  topics: Topics;
  store: DeliveryStore;
  endpointStates: EndpointStateStore;
  /** The projections webhook bodies are built from. */
  reads: UpstreamReads;
  endpoints: EndpointCache;
  /** The tenants' configuration versions seen on events (shared with `endpoints`). */
  versions: TenantVersions;
  deadLetters: DeadLetterStore;
  log: Logger;
  /** New or re-opened deliveries exist. */
  onWork: () => void;
  /** This process's scheduler, if it runs one: new deliveries go straight to it when it has room. */
  scheduler?: LeaseHolder;
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** A message was set aside; `reason` is from a bounded set. */
  onDeadLetter?: (reason: string) => void;
  /**
   * Other reactions to the batch's valid events (user emails, payment actions), run before the offsets are committed.
   * They must be idempotent: a failure retries the whole batch.
   */
  onEvents?: (events: DomainEvent[]) => Promise<void>;
  /** What a tenant's statements of reasons say of redress (its appeal window); absent, webhooks carry none. */
  statementContext?: (tenantId: string) => Promise<StatementContext>;
  /** Offsets of handled batches are committed together every this many milliseconds; 0 commits each batch. */
  commitIntervalMs?: number;
}

class Stopping extends Error {}

/**
 * Turns stored events into deliveries and applies webhook commands. Each message only writes to MongoDB (idempotent:
 * deliveries have derived ids, commands are state resets) and then commits, so a partition is held only while
 * MongoDB is unreachable, never by a webhook waiting for its retry.
 */
export class EventsConsumer {
  private readonly consumer: Consumer;
  private readonly commits: OffsetCommits;
  private stopping = false;

  constructor(private readonly options: EventsConsumerOptions) {
    this.consumer = options.kafka.consumer({
      groupId: options.groupId,
      allowAutoTopicCreation: false,
      ...consumerTimingOptions(options.timing),
    });
    options.metrics?.attach(this.consumer);
    this.commits = new OffsetCommits(this.consumer, options.commitIntervalMs ?? 0, options.log);
  }

  async start(): Promise<void> {
    const { topics } = this.options;
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [topics.events, topics.webhookCommands], fromBeginning: true });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 4,
      eachBatch: (payload) => this.onBatch(payload),
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.commits.close();
    await this.consumer.disconnect();
  }

  /**
   * A batch is handled as a unit: its deliveries go in one insertMany, then one commit. Handling is idempotent, so a
   * failure retries the whole batch (and a crash re-delivers it) without duplicates. After a few failed attempts the
   * batch is handled one message at a time: a message that still fails for a reason of its own (a tenant's bad data,
   * not MongoDB being away) is set aside, so one tenant's failure never holds another's webhooks.
   */
  private onBatch(payload: EachBatchPayload): Promise<void> {
    // One attempt can outlast the session (a store that answers slowly, the projection wait): heartbeats keep running
    // while the batch is worked on, and a failed one ends the retries.
    return BatchHeartbeat.run(
      () => payload.heartbeat(),
      this.options.timing.heartbeatIntervalMs,
      (beat) => this.handleBatch(payload, beat),
    );
  }

  private async handleBatch(payload: EachBatchPayload, beat: BatchHeartbeat): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    const last = messages[messages.length - 1];
    if (!last) return;
    const log = this.options.log.child({ topic, partition });
    const { retryInitialMs = 200, retryMaxMs = 5000 } = this.options;
    await retry(
      async (attempt) => {
        if (this.stopping || beat.failed || !payload.isRunning() || payload.isStale()) {
          throw new Stopping('consumer stopping or partition moving');
        }
        try {
          const isolate = attempt >= ISOLATE_AFTER_ATTEMPTS;
          if (topic === this.options.topics.webhookCommands) {
            for (const message of messages) {
              await this.isolated(isolate, topic, partition, message, log, () =>
                this.applyCommand(topic, partition, message, log),
              );
            }
          } else if (isolate) {
            for (const message of messages) {
              await this.isolated(true, topic, partition, message, log, () =>
                this.fanOut(topic, partition, [message], log),
              );
            }
          } else {
            await this.fanOut(topic, partition, messages, log);
          }
          await this.commits.handled(topic, partition, (BigInt(last.offset) + 1n).toString());
          // Without auto-resolve the fetch position only moves with resolved offsets.
          payload.resolveOffset(last.offset);
        } catch (err) {
          if (this.stopping) throw new Stopping('consumer stopping');
          throw err;
        }
      },
      {
        // Every failure retries (the batch is idempotent) until the consumer stops; isolation bounds what one message
        // can hold.
        backoff: { initialMs: retryInitialMs, maxMs: retryMaxMs },
        retriable: (err) => !(err instanceof Stopping),
        // The batch heartbeat keeps the partition while MongoDB is away instead of triggering a rebalance.
        onRetry: (err, attempt) => {
          log.warn({ err, attempt, firstOffset: messages[0]?.offset }, 'batch handling failed, retrying');
        },
      },
    );
  }

  /** Runs `work` for one message; when isolating, a failure of its own sets the message aside instead of throwing. */
  private async isolated(
    isolate: boolean,
    topic: string,
    partition: number,
    message: KafkaMessage,
    log: Logger,
    work: () => Promise<void>,
  ): Promise<void> {
    try {
      await work();
    } catch (err) {
      if (!isolate || isRetriable(err)) throw err;
      log.error({ err, offset: message.offset }, 'message failed after retries');
      await this.setAside(topic, partition, message, 'processing_failed', log, err);
    }
  }

  /** Records the message in `event_dead_letters` (ids and reason only), counts it and logs it without content. */
  /** The statement of reasons of a restricting (or lifting) decision goes into its webhook. */
  private async attachStatement(
    event: DomainEvent,
    trigger: WebhookTrigger,
    contexts: Map<string, Promise<StatementContext>>,
  ): Promise<void> {
    const contextOf = this.options.statementContext;
    if (!contextOf || trigger.kind === 'report' || trigger.kind === 'rule') return;
    if (!contexts.has(event.tenantId)) contexts.set(event.tenantId, contextOf(event.tenantId));
    const statement = statementOf(event, await contexts.get(event.tenantId)!);
    if (statement) trigger.statement = statement;
  }

  private async setAside(
    topic: string,
    partition: number,
    message: KafkaMessage,
    reason: string,
    log: Logger,
    err?: unknown,
  ): Promise<void> {
    const eventId = message.headers?.[HEADERS.eventId]?.toString();
    const parsed = safeJson(message.value?.toString() ?? '') as { tenantId?: unknown; type?: unknown } | undefined;
    const text = (value: unknown) => (typeof value === 'string' && value.length <= 200 ? value : undefined);
    const letter: EventDeadLetter = {
      _id: eventId ?? `${topic}/${partition}/${message.offset}`,
      eventId,
      tenantId: text(parsed?.tenantId),
      eventType: text(parsed?.type),
      topic,
      partition,
      offset: message.offset,
      reason,
      error: err instanceof Error ? err.name : undefined,
    };
    await this.options.deadLetters.setAside(letter);
    log.warn({ eventId, tenantId: letter.tenantId, offset: message.offset, reason }, 'message set aside');
    this.options.onDeadLetter?.(reason);
  }

  private async fanOut(topic: string, partition: number, messages: KafkaMessage[], log: Logger): Promise<void> {
    const { store } = this.options;
    const endpointsOf = new Map<string, Promise<WebhookEndpointDoc[]>>();
    const statementContexts = new Map<string, Promise<StatementContext>>();
    const docs: DeliveryDoc[] = [];
    // Set aside once the batch's other work held, so a batch retried for another reason records them once.
    const invalid: KafkaMessage[] = [];
    const valid: DomainEvent[] = [];
    const wanted: {
      event: DomainEvent;
      trigger: WebhookTrigger;
      view?: SubjectView;
      endpoints: WebhookEndpointDoc[];
    }[] = [];
    const setAsideInvalid = async () => {
      for (const message of invalid) await this.setAside(topic, partition, message, 'invalid_event', log);
    };
    for (const message of messages) {
      const parsed = DomainEvent.safeParse(safeJson(message.value?.toString() ?? ''));
      if (!parsed.success) {
        log.warn({ offset: message.offset, issues: parsed.error.issues.length }, 'event skipped: not a known event');
        invalid.push(message);
        continue;
      }
      const event = parsed.data;
      valid.push(event);
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
    // Build the bodies now, from the events' views (no read) or, for events without one, from the projections, which
    // are usually there already (their reads concurrently, a few at a time): the scheduler is spared a write each.
    const built: BuiltBody[] = [];
    for (let from = 0; from < wanted.length; from += BODY_READS_AT_ONCE) {
      const slice = wanted.slice(from, from + BODY_READS_AT_ONCE);
      built.push(
        ...(await Promise.all(
          slice.map(({ trigger, view }) => buildBody(this.options.reads, trigger, { mayWait: true, view })),
        )),
      );
    }
    const now = new Date();
    wanted.forEach(({ event, trigger, endpoints }, index) => {
      const body = built[index];
      const webhookId = webhookIdOf(event.id);
      for (const endpoint of endpoints) {
        docs.push(
          newDelivery(
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
          ),
        );
      }
    });
    if (valid.length > 0) await this.options.onEvents?.(valid);
    // The same event twice in one batch (a re-publish) is one delivery.
    const unique = [...new Map(docs.map((doc) => [doc._id, doc])).values()];
    if (unique.length === 0) return setAsideInvalid();
    const { inserted, adopted } = await store.insertNew(unique, this.options.scheduler);
    log.info({ deliveries: unique.length, inserted: inserted.size }, 'deliveries created');
    await setAsideInvalid();
    if ([...inserted].some((id) => !adopted.has(id))) this.options.onWork();
  }

  private async applyCommand(topic: string, partition: number, message: KafkaMessage, log: Logger): Promise<void> {
    const parsed = WebhookCommand.safeParse(safeJson(message.value?.toString() ?? ''));
    if (!parsed.success) {
      log.warn({ issues: parsed.error.issues.length }, 'command skipped: invalid');
      await this.setAside(topic, partition, message, 'invalid_command', log);
      return;
    }
    const command = parsed.data;
    const { store } = this.options;
    const now = new Date();
    switch (command.type) {
      case 'RetryDelivery': {
        const found = await store.retry(command.tenantId, command.deliveryId, now);
        log.info({ commandId: command.id, deliveryId: command.deliveryId, found }, 'delivery retry requested');
        break;
      }
      case 'ReplayEndpoint': {
        const since = new Date(command.since);
        if (Number.isNaN(since.getTime())) {
          log.warn({ commandId: command.id }, 'command skipped: invalid since');
          return;
        }
        const count = await store.replay(command.tenantId, command.endpointId, since, now);
        log.info({ commandId: command.id, endpointId: command.endpointId, count }, 'endpoint replay requested');
        break;
      }
      case 'EnableEndpoint': {
        const found = await this.options.endpointStates.enableEndpoint(command.tenantId, command.endpointId);
        this.options.endpoints.forget(command.tenantId, command.endpointId);
        log.info({ commandId: command.id, endpointId: command.endpointId, found }, 'endpoint re-enabled');
        break;
      }
    }
    this.options.onWork();
  }
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

/** A failure that would hit every message alike (the store out of reach): the batch waits instead of setting aside. */
function isRetriable(err: unknown): boolean {
  const failure = fromStore(err);
  return failure instanceof AppError && failure.retriable;
}
