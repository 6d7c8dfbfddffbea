import type { EndpointStateDoc, WebhookEndpointDoc } from '@vigil/proto';
import { retry, type BackoffPolicy } from '@vigil/proto/platform';
import type { Logger } from 'pino';
import type { EndpointStateStore } from '../store/endpoint-states';
import { isRetriable } from '../store/store-errors';
import type { EndpointCache } from './endpoint-cache';

export interface EndpointHealthOptions {
  states: Pick<EndpointStateStore, 'endpointSucceeded' | 'endpointFailed' | 'disableEndpoint'>;
  endpoints: Pick<EndpointCache, 'get' | 'changed'>;
  /** Tries of a health write that follows a recorded outcome, and the delays between them. */
  writes?: { attempts: number; backoff: BackoffPolicy };
  /** A health write failed every try (see `write`). */
  onWriteFailed?: () => void;
}

/** About 1.5 s of tries at most: the worker's slot stays taken meanwhile. */
const WRITES = { attempts: 5, backoff: { initialMs: 100, maxMs: 2_000 } };

/**
 * What an attempt does to its endpoint's health: a success clears the failing streak, a failure starts one, a 410 or
 * a streak past the bound disables the endpoint. Each write tells the endpoint cache what it changed.
 */
export class EndpointHealth {
  constructor(private readonly options: EndpointHealthOptions) {}

  /** After a success was recorded. */
  async succeeded(endpoint: WebhookEndpointDoc, state: EndpointStateDoc | null, log: Logger): Promise<void> {
    const written = await this.write(log, () => this.options.states.endpointSucceeded(endpoint, state, new Date()));
    if (written?.value) this.options.endpoints.changed(endpoint, written.value, ['failingSince']);
  }

  /** After a failed attempt: since when the endpoint has been failing (its first failure starts the streak now). */
  async failingSince(endpoint: WebhookEndpointDoc, now: Date): Promise<Date> {
    const known = (await this.options.endpoints.get(endpoint.tenantId, endpoint._id))?.state?.failingSince;
    const failingSince = known ?? (await this.options.states.endpointFailed(endpoint, now));
    if (!known) this.options.endpoints.changed(endpoint, { failingSince });
    return failingSince;
  }

  /** After the attempt that disables the endpoint was recorded; true when the endpoint is now disabled. */
  async disable(endpoint: WebhookEndpointDoc, reason: 'gone' | 'failing', now: Date, log: Logger): Promise<boolean> {
    const disabled = await this.write(log, () => this.options.states.disableEndpoint(endpoint, reason, now));
    if (!disabled) return false;
    this.options.endpoints.changed(endpoint, disabled.value);
    return true;
  }

  /**
   * A health write that follows a recorded outcome. The delivery is final by then, so nothing else would try it again:
   * it is tried again here while the store is out of reach, within `writes`. A write that failed every try is logged
   * and counted, and undefined is returned; the endpoint's next attempt writes its health again.
   */
  private async write<R>(log: Logger, write: () => Promise<R>): Promise<{ value: R } | undefined> {
    const { attempts, backoff } = this.options.writes ?? WRITES;
    try {
      const value = await retry(() => write(), {
        backoff,
        maxAttempts: attempts,
        retriable: isRetriable,
        onRetry: (err, attempt) => log.warn({ err, attempt: attempt + 1 }, 'endpoint health not written, retrying'),
      });
      return { value };
    } catch (err) {
      log.error({ err }, 'endpoint health not written: the attempt is recorded, the endpoint state is not');
      this.options.onWriteFailed?.();
      return undefined;
    }
  }
}
