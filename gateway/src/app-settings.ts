import type { Config } from './config';
import type { BacktestSettings } from './use-cases/deps';

/** The gateway's settings, each from its variable in `config.ts` (where the defaults are). */
export interface AppSettings {
  bodyLimitBytes: number;
  /** Default per-key limit (`RATE_LIMIT_POINTS` per `RATE_LIMIT_WINDOW_S`); a tenant's own limit replaces it. */
  rateLimitPoints: number;
  rateLimitWindowSeconds: number;
  trustProxy: boolean;
  /** `WEBHOOK_ALLOWED_CIDRS`. */
  webhookAllowedCidrs: readonly string[];
  webhookMaxEndpointsPerTenant: number;
  /** `PROMPT_RULES_ENABLED`: the moderator has an LLM to judge prompt strategies. */
  promptRulesEnabled: boolean;
  /** `BACKTEST_*`: bounds of backtests. */
  backtests: BacktestSettings;
  /** `PUBLIC_URL`: base of the links handed to end users. */
  publicUrl: string;
  /** `APPEAL_TOKEN_SECRET`; appeal links and the appeal page are off without it. */
  appealTokenSecret: string | undefined;
  appealTokenTtlSeconds: number;
  /** `SECRETS_ENCRYPTION_KEY`: seals tenants' payments keys; storing one is refused without it. */
  secretsEncryptionKey: readonly Buffer[] | undefined;
  appealPagePerMinute: number;
  consoleSessionTtlSeconds: number;
  consoleLockoutAttempts: number;
  consoleLockoutSeconds: number;
  consoleSignInPerMinute: number;
}

export function appSettings(config: Config): AppSettings {
  return {
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    rateLimitPoints: config.RATE_LIMIT_POINTS,
    rateLimitWindowSeconds: config.RATE_LIMIT_WINDOW_S,
    trustProxy: config.TRUST_PROXY,
    webhookAllowedCidrs: config.WEBHOOK_ALLOWED_CIDRS,
    webhookMaxEndpointsPerTenant: config.WEBHOOK_MAX_ENDPOINTS_PER_TENANT,
    promptRulesEnabled: config.PROMPT_RULES_ENABLED,
    backtests: {
      maxRunning: config.BACKTEST_MAX_RUNNING,
      maxPerHour: config.BACKTEST_MAX_PER_HOUR,
      maxRecords: config.BACKTEST_MAX_RECORDS,
      maxAiCalls: config.BACKTEST_MAX_AI_CALLS,
      ttlSeconds: config.BACKTEST_RESULT_TTL_S,
    },
    publicUrl: config.PUBLIC_URL,
    appealTokenSecret: config.APPEAL_TOKEN_SECRET,
    secretsEncryptionKey: config.SECRETS_ENCRYPTION_KEY,
    appealTokenTtlSeconds: config.APPEAL_TOKEN_TTL_S,
    appealPagePerMinute: config.APPEAL_PAGE_PER_MINUTE,
    consoleSessionTtlSeconds: config.CONSOLE_SESSION_TTL_S,
    consoleLockoutAttempts: config.CONSOLE_LOCKOUT_ATTEMPTS,
    consoleLockoutSeconds: config.CONSOLE_LOCKOUT_S,
    consoleSignInPerMinute: config.CONSOLE_SIGN_IN_PER_MINUTE,
  };
}
