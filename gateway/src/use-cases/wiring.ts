import type { Db } from 'mongodb';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { SecretBox, type TenantVersions, type Topics } from '@vigil/proto';
import type { AppSettings } from '../app-settings';
import { AppealLinks, type AppealTokens } from '../appeal/appeal-token';
import type { ModeratorClient } from '../grpc/moderator-client';
import type { KeyLimiter } from '../http/rate-limit';
import type { OutgoingCommand } from '../kafka/command-producer';
import { endpointUrlGuard, type ResolveHost } from '../routes/webhook-endpoints/endpoint-url';
import { BacktestStore } from '../store/backtest-store';
import type { BatchJobStoreOptions } from '../store/batch-job-store';
import { ConfigStore } from '../store/config-store';
import { ConfigVersionStore } from '../store/config-version-store';
import { emailLogStore } from '../store/email-log-store';
import { paymentActionLogStore } from '../store/payment-action-log-store';
import { PaymentKeyStore } from '../store/payment-key-store';
import { RetroactionStore } from '../store/retroaction-store';
import { RulePrecisionStore } from '../store/rule-precision-store';
import { RuleVersionStore } from '../store/rule-version-store';
import { TdbStore } from '../store/tdb-store';
import { TransparencyCountStore } from '../store/transparency-count-store';
import { WebhookStore } from '../store/webhook-store';
import type { UseCaseDeps } from './deps';

/** The clients and settings the use cases' parts are built from (the app's own, see `AppDeps`). */
export interface UseCaseClients {
  db: Db;
  log: Logger;
  /** Where metrics go (requests, batch job writes that failed); none when absent. */
  registry?: Registry;
  /**
   * The tenants' configuration versions this process knows (the authenticator reads them, this app's changes raise
   * them); stamped on commands and moderator calls.
   */
  versions: TenantVersions;
  /** How long an authenticated key's tenant configuration may be cached, ms (the authenticator's TTL). */
  configTtlMs: number;
  moderator: ModeratorClient;
  commands: { send(command: OutgoingCommand): Promise<void> };
  topics: Topics;
  /** How webhook hosts are resolved at registration; the system resolver when absent (tests pass their own). */
  resolveHost?: ResolveHost;
  /** Decides the per-key rate limit (a `SharedRateLimiter`, started by the caller). */
  rateLimiter: KeyLimiter;
  settings: AppSettings;
  /** Appeal and complaint links, when the appeal secret is set. */
  appealTokens: AppealTokens | undefined;
  complaintTokens: AppealTokens | undefined;
}

/** The stores and clients the use cases share. No I/O: the stores open their collections lazily. */
export function useCaseDeps(clients: UseCaseClients): UseCaseDeps {
  const { db, settings } = clients;
  const configVersions = new ConfigVersionStore(db, clients.versions, clients.configTtlMs);
  const ruleVersions = new RuleVersionStore(db);
  const secrets = settings.secretsEncryptionKey?.length ? new SecretBox(settings.secretsEncryptionKey) : undefined;
  const jobWriteFailed = jobWriteFailures(clients.log, clients.registry);
  return {
    moderator: clients.moderator,
    commands: clients.commands,
    topics: clients.topics,
    versions: clients.versions,
    configVersions,
    configStore: new ConfigStore(db, configVersions, clients.versions, ruleVersions),
    webhooks: new WebhookStore(db, configVersions),
    endpointUrls: endpointUrlGuard({
      allowedCidrs: settings.webhookAllowedCidrs,
      ...(clients.resolveHost ? { resolve: clients.resolveHost } : {}),
    }),
    maxEndpointsPerTenant: settings.webhookMaxEndpointsPerTenant,
    promptRulesEnabled: settings.promptRulesEnabled,
    appealLinks: new AppealLinks(clients.appealTokens, settings.publicUrl, clients.complaintTokens),
    emailLog: emailLogStore(db),
    paymentKeys: new PaymentKeyStore(db, secrets),
    paymentLog: paymentActionLogStore(db),
    tdb: new TdbStore(db, configVersions, secrets),
    rateLimiter: clients.rateLimiter,
    backtests: new BacktestStore(db, { onWriteFailed: jobWriteFailed('backtest') }),
    backtestSettings: settings.backtests,
    retroactions: new RetroactionStore(db, { onWriteFailed: jobWriteFailed('retroaction') }),
    rulePrecision: new RulePrecisionStore(db, ruleVersions),
    transparencyCounts: new TransparencyCountStore(db),
  };
}

/**
 * Logs and counts a batch job's hand-over write that failed. The request goes on without it: an unsent slot is
 * released later (UNSENT_RELEASE_MS), so this is what tells an operator why a job sat `queued` meanwhile.
 */
function jobWriteFailures(log: Logger, registry: Registry | undefined) {
  const failed = new Counter({
    name: 'gateway_batch_job_writes_failed_total',
    help: 'Hand-over writes of batch jobs that failed, by kind (backtest, retroaction) and write (discard, sent).',
    labelNames: ['kind', 'write'],
    registers: registry ? [registry] : [],
  });
  return (kind: 'backtest' | 'retroaction'): BatchJobStoreOptions['onWriteFailed'] =>
    (write, job, err) => {
      failed.inc({ kind, write });
      log.error({ err, kind, write, jobId: job._id, tenantId: job.tenantId }, 'batch job write failed');
    };
}
