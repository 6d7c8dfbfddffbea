import { AppealTokens } from '@vigil/proto';
import type { Config } from '../config';
import { counterIn, indexed, type NotifierModule, type NotifierParts } from '../notifier-module';
import { EmailStore } from '../store/email-store';
import { createSmtpSender } from './smtp-sender';
import { EMAILED_EVENT_TYPES, UserEmails } from './user-emails';

export type EmailConfig = Pick<
  Config,
  | 'DELIVERY_WORKER_ENABLED'
  | 'DELIVERY_LEASE_MARGIN_MS'
  | 'SMTP_URL'
  | 'EMAIL_MAX_DELAY_S'
  | 'EMAIL_FROM'
  | 'EMAIL_TIMEOUT_MS'
  | 'EMAIL_RETRY_SCHEDULE_S'
  | 'EMAIL_CONCURRENCY'
  | 'EMAIL_POLL_MS'
  | 'APPEAL_TOKEN_SECRET'
  | 'APPEAL_TOKEN_TTL_S'
  | 'GATEWAY_PUBLIC_URL'
>;

/**
 * User emails on status changes and reporters' outcome emails. Whichever instance consumes the event plans the
 * message, pending (its reaction); every instance whose delivery worker runs and that has SMTP_URL sends it.
 */
export async function emailModule(config: EmailConfig, parts: NotifierParts): Promise<NotifierModule> {
  const { log } = parts;
  const store = await indexed(parts, 'email indexes', new EmailStore(parts.db, parts.timing));
  const attempts = counterIn(parts, 'notifier_emails_total', 'User email attempts by result');
  const { APPEAL_TOKEN_SECRET: secret, APPEAL_TOKEN_TTL_S: ttlS } = config;
  const emails = new UserEmails({
    store,
    settings: parts.settings,
    sender: config.SMTP_URL
      ? createSmtpSender({ url: config.SMTP_URL, from: config.EMAIL_FROM, timeoutMs: config.EMAIL_TIMEOUT_MS })
      : undefined,
    log: log.child({ component: 'emails' }),
    retryScheduleS: config.EMAIL_RETRY_SCHEDULE_S,
    maxDelayMs: config.EMAIL_MAX_DELAY_S * 1000,
    pollMs: config.EMAIL_POLL_MS,
    // Connect, greeting and a few replies each have the timeout; the margin covers the database writes.
    sendMs: config.EMAIL_TIMEOUT_MS * 4,
    leaseMs: config.EMAIL_TIMEOUT_MS * 4 + config.DELIVERY_LEASE_MARGIN_MS,
    concurrency: config.EMAIL_CONCURRENCY,
    ...(secret
      ? {
          appeals: {
            tokens: new AppealTokens(secret, ttlS),
            complaints: new AppealTokens(secret, ttlS, Date.now, 'complaint'),
            publicUrl: config.GATEWAY_PUBLIC_URL,
          },
        }
      : {}),
    onAttempt: (result) => attempts?.inc({ result }),
  });
  return {
    name: 'emails',
    reactions: [
      {
        name: 'emails',
        applicableEvents: EMAILED_EVENT_TYPES,
        react: (events) => emails.plan(events),
      },
    ],
    start: () => {
      if (config.DELIVERY_WORKER_ENABLED) emails.start();
    },
    drain: () => emails.stop(),
  };
}
