import type { TenantVersions, Topics } from '@vigil/proto';
import type { AppealLinks } from '../appeal/appeal-token';
import type { ModeratorClient } from '../grpc/moderator-client';
import type { KeyLimiter } from '../http/rate-limit';
import type { OutgoingCommand } from '../kafka/command-producer';
import type { BacktestStore } from '../store/backtest-store';
import type { ConfigStore } from '../store/config-store';
import type { ConfigVersionStore } from '../store/config-version-store';
import type { EmailLogStore } from '../store/email-log-store';
import type { PaymentActionLogStore } from '../store/payment-action-log-store';
import type { PaymentKeyStore } from '../store/payment-key-store';
import type { RetroactionStore } from '../store/retroaction-store';
import type { RulePrecisionStore } from '../store/rule-precision-store';
import type { TdbStore } from '../store/tdb-store';
import type { TransparencyCountStore } from '../store/transparency-count-store';
import type { WebhookStore } from '../store/webhook-store';
import type { EndpointUrlGuard } from '../routes/webhook-endpoints/endpoint-url';

/** Bounds of backtests in this deployment (`BACKTEST_*`). */
export interface BacktestSettings {
  maxRunning: number;
  /** Backtests a tenant may create per hour (0: no bound). */
  maxPerHour: number;
  maxRecords: number;
  maxAiCalls: number;
  ttlSeconds: number;
}

/** What the use cases, the API's routes and the console's pages need; built by `createApp`. */
export interface UseCaseDeps {
  moderator: ModeratorClient;
  commands: { send(command: OutgoingCommand): Promise<void> };
  topics: Topics;
  /** The tenants' configuration versions known here: stamped on every command. */
  versions: TenantVersions;
  /** The tenants' stored configuration versions (raised by every change; read by the console's session). */
  configVersions: ConfigVersionStore;
  configStore: ConfigStore;
  webhooks: WebhookStore;
  endpointUrls: EndpointUrlGuard;
  /** Webhook endpoints per tenant at most. */
  maxEndpointsPerTenant: number;
  /** Whether rule sets may use `prompt` strategies (the moderator has an LLM). */
  promptRulesEnabled: boolean;
  appealLinks: AppealLinks;
  emailLog: EmailLogStore;
  paymentKeys: PaymentKeyStore;
  paymentLog: PaymentActionLogStore;
  /** Backtest jobs and their runs. */
  backtests: BacktestStore;
  backtestSettings: BacktestSettings;
  /** Retroaction jobs (a promoted version applied from a backtest's selection) and their runs. */
  retroactions: RetroactionStore;
  /** Transparency Database settings (token sealed) and the submission log. */
  tdb: TdbStore;
  /** Request counts shared with the other gateway replicas (the API key, console sign-in and appeal page limits). */
  rateLimiter: KeyLimiter;
  /** Each rule's flags and human reviews (written by the moderator). */
  rulePrecision: RulePrecisionStore;
  /** The transparency report's counters (written by the moderator). */
  transparencyCounts: TransparencyCountStore;
}

/** Who asks, as a use case needs it: the tenant acted for and the request's id (for correlation, never for logic). */
export interface Caller {
  tenantId: string;
  requestId: string;
}
