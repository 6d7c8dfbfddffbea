import type { WebhookCommand } from '@vigil/proto';
import type { Logger } from 'pino';
import type { WebhookCommandHandler } from '../kafka/events-consumer';
import type { DeliveryStore } from '../store/delivery-store';
import type { EndpointStateStore } from '../store/endpoint-states';
import type { EndpointCache } from './endpoint-cache';

export interface WebhookCommandsOptions {
  store: Pick<DeliveryStore, 'retry' | 'replay'>;
  endpointStates: Pick<EndpointStateStore, 'enableEndpoint'>;
  endpoints: Pick<EndpointCache, 'forget'>;
  /** New or re-opened deliveries may exist. */
  onWork: () => void;
}

/** Applies the gateway's webhook commands: each is a state reset, so applying one twice changes nothing more. */
export class WebhookCommands implements WebhookCommandHandler {
  constructor(private readonly options: WebhookCommandsOptions) {}

  async apply(command: WebhookCommand, log: Logger): Promise<void> {
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
