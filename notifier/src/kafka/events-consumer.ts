import { DomainEvent, WebhookCommand, type Topics } from '@vigil/proto';
import type { Consumer, EachMessagePayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { deliveryIdOf, subscribes, triggerOf, webhookIdOf } from '../domain/webhook-events';
import type { DeliveryDoc, DeliveryStore } from '../store/delivery-store';

export interface EventsConsumerOptions {
  kafka: Kafka;
  groupId: string;
  sessionTimeoutMs: number;
  topics: Topics;
  store: DeliveryStore;
  log: Logger;
  /** New or re-opened deliveries exist. */
  onWork: () => void;
  retryInitialMs?: number;
  retryMaxMs?: number;
}

class Stopping extends Error {}

/**
 * Turns stored events into deliveries and applies webhook commands. Each message only writes to MongoDB (idempotent:
 * deliveries have derived ids, commands are state resets) and then commits, so a partition is held only while
 * MongoDB is unreachable, never by a webhook waiting for its retry.
 */
export class EventsConsumer {
  private readonly consumer: Consumer;
  private stopping = false;

  constructor(private readonly options: EventsConsumerOptions) {
    this.consumer = options.kafka.consumer({
      groupId: options.groupId,
      sessionTimeout: options.sessionTimeoutMs,
      // kafkajs requires the heartbeat well inside the session.
      heartbeatInterval: Math.min(3000, Math.floor(options.sessionTimeoutMs / 3)),
      allowAutoTopicCreation: false,
    });
  }

  async start(): Promise<void> {
    const { topics } = this.options;
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [topics.events, topics.webhookCommands], fromBeginning: true });
    await this.consumer.run({
      autoCommit: false,
      partitionsConsumedConcurrently: 4,
      eachMessage: (payload) => this.onMessage(payload),
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.consumer.disconnect();
  }

  private async onMessage({ topic, partition, message, heartbeat }: EachMessagePayload): Promise<void> {
    const log = this.options.log.child({ topic, partition, offset: message.offset });
    const { retryInitialMs = 200, retryMaxMs = 5000 } = this.options;
    for (let attempt = 0; ; attempt += 1) {
      if (this.stopping) throw new Stopping('consumer stopping');
      try {
        const raw = message.value?.toString() ?? '';
        if (topic === this.options.topics.webhookCommands) await this.applyCommand(raw, log);
        else await this.fanOut(raw, log);
        await this.consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
        return;
      } catch (err) {
        if (this.stopping) throw new Stopping('consumer stopping');
        log.warn({ err, attempt }, 'message handling failed, retrying');
        // Keeps the partition while MongoDB is away instead of triggering a rebalance.
        await heartbeat().catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, Math.min(retryInitialMs * 2 ** attempt, retryMaxMs)));
      }
    }
  }

  private async fanOut(raw: string, log: Logger): Promise<void> {
    const parsed = DomainEvent.safeParse(safeJson(raw));
    if (!parsed.success) {
      log.warn({ issues: parsed.error.issues.length }, 'event skipped: not a known event');
      return;
    }
    const event = parsed.data;
    const decision = triggerOf(event);
    if (decision.kind === 'none') return;
    if (decision.kind === 'test_mode') {
      log.info(
        { eventId: event.id, subjectId: decision.subjectId, tenantId: event.tenantId },
        'webhook skipped: test mode',
      );
      return;
    }
    const { trigger } = decision;
    const endpoints = (await this.options.store.activeEndpoints(event.tenantId)).filter((endpoint) =>
      subscribes(endpoint.events, trigger.event),
    );
    if (endpoints.length === 0) {
      log.debug({ eventId: event.id, tenantId: event.tenantId }, 'webhook has no endpoint');
      return;
    }
    const now = new Date();
    const webhookId = webhookIdOf(event.id);
    const docs: DeliveryDoc[] = endpoints.map((endpoint) => ({
      _id: deliveryIdOf(event.id, endpoint._id),
      tenantId: event.tenantId,
      endpointId: endpoint._id,
      webhookId,
      eventId: event.id,
      event: trigger.event,
      subjectId: trigger.subjectId,
      trigger,
      state: 'pending',
      attemptCount: 0,
      cycleAttempts: 0,
      attempts: [],
      dueAt: now,
      createdAt: now,
      updatedAt: now,
    }));
    const inserted = await this.options.store.insertNew(docs);
    log.info({ eventId: event.id, webhookId, endpoints: docs.length, inserted }, 'deliveries created');
    if (inserted > 0) this.options.onWork();
  }

  private async applyCommand(raw: string, log: Logger): Promise<void> {
    const parsed = WebhookCommand.safeParse(safeJson(raw));
    if (!parsed.success) {
      log.warn({ issues: parsed.error.issues.length }, 'command skipped: invalid');
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
        const found = await store.enableEndpoint(command.tenantId, command.endpointId);
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
