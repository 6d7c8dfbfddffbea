import {
  statementOf,
  AppealTokens,
  DEFAULT_EMAIL_TEMPLATES,
  type EmailKind,
  type DomainEvent,
  type DomainEventType,
  type EmailAttempt,
  type EmailMessageDoc,
} from '@vigil/proto';
import { statementLines } from './statement-lines';
import { REPORTER_EMAIL_TEMPLATES, emailKindFor } from './email-kinds';
import type { Logger } from 'pino';
import { renderEmail } from '../domain/email-render';
import { DueJobs, attemptFits, dueNow, type DueJobsSettings } from '../queue/due-jobs';
import { emailMessageIdOf, type EmailStore } from '../store/email-store';
import type { TenantSettingsReads } from '../store/tenant-settings';
import type { SmtpSender } from './smtp-sender';

/** The events `plan` reads: a user's status change, and a report's or a complaint's outcome for its reporter. */
export const EMAILED_EVENT_TYPES: readonly DomainEventType[] = [
  'UserStatusChanged',
  'ReportDecided',
  'ReportComplaintDecided',
];

export interface UserEmailsOptions extends DueJobsSettings {
  store: EmailStore;
  /** Whether and how each tenant emails its users. */
  settings: Pick<TenantSettingsReads, 'settingsOf'>;
  /**
   * Absent when this process has no SMTP relay: it still plans messages, as pending, and leaves them to processes
   * that have one.
   */
  sender?: SmtpSender;
  /**
   * A message not attempted this long after it was planned (no process with SMTP ran meanwhile) is recorded as
   * skipped, `expired`, instead of being sent late. Milliseconds.
   */
  maxDelayMs: number;
  /**
   * The longest a send takes (its connect, greeting and replies), milliseconds. A message whose lease has less left
   * when its send would start (the store answered the claim and the reads before it slowly) is not sent: another
   * process could take it over at the lease's end and send it too. It is left to be taken over, and sent once.
   */
  sendMs: number;
  /**
   * Signs the appeal link of the Suspended and Banned emails, and the complaint link of a reporter's email about a
   * decision not to act; absent when appeals are off.
   */
  appeals?: { tokens: AppealTokens; complaints: AppealTokens; publicUrl: string };
  onAttempt?: (result: string) => void;
}

/**
 * User emails on status changes (Iffy §7.2). The events consumer calls `plan`, which writes one message document per
 * event (derived `_id`, so a re-consumed event sends once) before the offset is committed; DueJobs claim due
 * messages, which are rendered, sent, and rescheduled on failure. Retries wait in MongoDB, never in a Kafka partition.
 *
 * The plan depends only on the event and the tenant's settings, never on this process's SMTP configuration: whichever
 * replica consumed the event, the message is pending, and the replicas with an SMTP relay send it. A replica without
 * one does not run the loop. (Planning it as skipped there made an email depend on which replica held the event's
 * partition, for good, e.g. during a rollout that adds SMTP_URL.)
 */
export class UserEmails {
  private readonly jobs: DueJobs<EmailMessageDoc>;

  constructor(private readonly options: UserEmailsOptions) {
    this.jobs = new DueJobs({ ...options, run: (doc) => this.process(doc), close: () => options.sender?.close() });
  }

  /** Records the emails these events call for; idempotent. Throws on a database failure (the batch is retried). */
  async plan(events: DomainEvent[]): Promise<void> {
    const { store, log } = this.options;
    let created = 0;
    for (const event of events) {
      if (event.type === 'ReportDecided' || event.type === 'ReportComplaintDecided') {
        if (await this.planForReporter(event)) created += 1;
        continue;
      }
      if (event.type !== 'UserStatusChanged' || event.data.testMode) continue;
      const kind = emailKindFor(event.data.status, event.data.previousStatus);
      if (!kind) continue;
      const settings = await this.options.settings.settingsOf(event.tenantId, event.configVersion);
      if (!settings.emails.enabled) continue;
      const now = new Date();
      const doc: EmailMessageDoc = {
        _id: emailMessageIdOf(event.id),
        tenantId: event.tenantId,
        userId: event.data.userId,
        eventId: event.id,
        kind,
        state: 'pending',
        ...dueNow(now),
      };
      const statement = statementOf(event, { appealWindowDays: settings.appealWindowDays });
      if (statement) doc.statement = statement;
      if (await store.insertNew(doc)) {
        created += 1;
        log.debug({ eventId: event.id, tenantId: event.tenantId, kind }, 'email planned');
      }
    }
    if (created > 0) this.jobs.wake();
  }

  /**
   * The outcome email of a report, or of a complaint about it, to a reporter who gave an address (Art. 16(5) and 20(5)
   * DSA). Planned without the address, which is read when sending. True if this call planned it.
   */
  private async planForReporter(
    event: Extract<DomainEvent, { type: 'ReportDecided' | 'ReportComplaintDecided' }>,
  ): Promise<boolean> {
    const { store, log } = this.options;
    const { data } = event;
    if (data.reporter.type !== 'user' || !data.reporter.hasEmail) return false;
    const settings = await this.options.settings.settingsOf(event.tenantId, event.configVersion);
    if (!settings.emails.enabled) return false;
    const now = new Date();
    const doc: EmailMessageDoc = {
      _id: emailMessageIdOf(event.id),
      tenantId: event.tenantId,
      userId: '',
      reportId: data.reportId,
      eventId: event.id,
      kind: event.type === 'ReportDecided' ? 'ReportDecided' : 'ComplaintDecided',
      state: 'pending',
      ...dueNow(now),
    };
    if (event.type === 'ReportDecided') {
      const outcome = [`Report: ${data.reportId}.`];
      if (event.data.outcome === 'Actioned') {
        const what =
          event.data.action === 'Flag'
            ? 'the reported content was restricted'
            : event.data.action === 'Ban'
              ? 'the reported account was terminated'
              : 'the reported account was suspended';
        outcome.push(`Decision: ${what}.`, `Reason: ${data.reason}`);
      } else {
        const until = new Date(new Date(event.occurredAt).getTime() + settings.appealWindowDays * 86_400_000);
        outcome.push(
          'Decision: no action was taken.',
          `Reason: ${data.reason}`,
          `If you disagree, you can complain about this decision until ${until.toISOString().slice(0, 10)} ` +
            `(${settings.appealWindowDays} days).`,
        );
        doc.complaintOpenUntil = until;
      }
      doc.outcome = outcome;
    } else {
      const statement = statementOf(event, { appealWindowDays: 0 });
      if (statement) doc.statement = statement;
      doc.outcome = [`Report: ${data.reportId}.`, `Complaint: ${event.data.complaintId}.`];
    }
    if (!(await store.insertNew(doc))) return false;
    log.debug({ eventId: event.id, tenantId: event.tenantId, kind: doc.kind }, 'email planned');
    return true;
  }

  start(): void {
    if (!this.options.sender) {
      this.options.log.info('no SMTP relay: emails this process plans are sent by the notifiers that have one');
      return;
    }
    this.jobs.start();
  }

  stop(): Promise<void> {
    return this.jobs.stop();
  }

  private async process(doc: EmailMessageDoc): Promise<void> {
    const { store, appeals } = this.options;
    const log = this.options.log.child({ messageId: doc._id, tenantId: doc.tenantId, userId: doc.userId });
    if (doc.attemptCount === 0 && Date.now() - doc.createdAt.getTime() > this.options.maxDelayMs) {
      // No process with SMTP ran for that long (none was configured): news of a status change this old is not sent.
      await store.finish(doc, undefined, { state: 'skipped', reason: 'expired' });
      log.warn({ kind: doc.kind }, 'email skipped: not sent in time');
      return;
    }
    if (doc.reportId) {
      await this.sendToReporter(doc, doc.reportId, log);
      return;
    }
    const user = await store.userOf(doc.userId);
    if (!user) {
      // The projection lags its event only briefly; the schedule gives it time.
      await this.failed(doc, { at: new Date(), durationMs: 0, error: 'user_unavailable' }, true, log);
      return;
    }
    if (!user.email) {
      await store.finish(doc, undefined, { state: 'skipped', reason: 'no_email' });
      log.info({ kind: doc.kind }, 'email skipped: user has no address');
      return;
    }
    const settings = await this.options.settings.settingsOf(doc.tenantId);
    const kind = doc.kind as EmailKind;
    const template = settings.emails.templates[kind] ?? DEFAULT_EMAIL_TEMPLATES[kind];
    // A banned user may appeal too (the users API gives them an appealUrl, and the appeal page takes their appeal).
    const appealUrl =
      appeals && (doc.kind === 'Suspended' || doc.kind === 'Banned')
        ? `${appeals.publicUrl}/appeal?token=${appeals.tokens.issue(doc.tenantId, doc.userId, settings.appealWindowDays * 86_400)}`
        : undefined;
    const email = renderEmail(
      template,
      {
        username: user.username ?? user.name ?? '',
        name: user.name ?? user.username ?? '',
        platformName: (await store.tenantNameOf(doc.tenantId)) ?? '',
        ...(appealUrl ? { appealUrl } : {}),
      },
      doc.statement ? statementLines(doc.statement) : [],
    );
    await this.send(doc, user.email, email, log);
  }

  /** A reporter's outcome email: the address from the report's contact, while the tenant's retention runs. */
  private async sendToReporter(doc: EmailMessageDoc, reportId: string, log: Logger): Promise<void> {
    const { store, appeals } = this.options;
    const address = await store.reporterEmailOf(reportId, doc.tenantId);
    if (!address) {
      await store.finish(doc, undefined, { state: 'skipped', reason: 'no_email' });
      log.info({ kind: doc.kind }, 'email skipped: the reporter gave no address or it is no longer kept');
      return;
    }
    const until = doc.complaintOpenUntil?.getTime();
    const complaintUrl =
      appeals && until !== undefined && until > Date.now()
        ? `${appeals.publicUrl}/complaint?token=${appeals.complaints.issue(doc.tenantId, reportId, Math.ceil((until - Date.now()) / 1000))}`
        : undefined;
    const email = renderEmail(
      REPORTER_EMAIL_TEMPLATES[doc.kind === 'ComplaintDecided' ? 'ComplaintDecided' : 'ReportDecided'],
      {
        platformName: (await store.tenantNameOf(doc.tenantId)) ?? '',
        ...(complaintUrl ? { appealUrl: complaintUrl } : {}),
      },
      doc.statement ? statementLines(doc.statement) : [],
      {
        outcome: doc.outcome ?? [],
        link: { text: 'To complain about this decision, visit:', label: 'Complain about this decision' },
      },
    );
    await this.send(doc, address, email, log);
  }

  private async send(
    doc: EmailMessageDoc,
    address: string,
    email: ReturnType<typeof renderEmail>,
    log: Logger,
  ): Promise<void> {
    const { store, sender } = this.options;
    const at = new Date();
    if (doc.leaseUntil && !attemptFits(doc.leaseUntil.getTime(), this.options.sendMs, at.getTime())) {
      log.info({ kind: doc.kind }, 'email left to be taken over: its lease has less left than a send takes');
      return;
    }
    const result = await sender!.send(address, email);
    const attempt: EmailAttempt = {
      at,
      durationMs: result.durationMs,
      ...(result.responseCode !== undefined ? { responseCode: result.responseCode } : {}),
      ...(result.error !== undefined ? { error: result.error } : {}),
    };
    if (result.ok) {
      this.options.onAttempt?.('sent');
      await store.finish(doc, attempt, { state: 'sent' });
      log.info({ kind: doc.kind, durationMs: result.durationMs }, 'email sent');
      return;
    }
    await this.failed(doc, attempt, result.retriable, log);
  }

  private async failed(doc: EmailMessageDoc, attempt: EmailAttempt, retriable: boolean, log: Logger): Promise<void> {
    this.options.onAttempt?.(attempt.error ?? 'error');
    const next = this.jobs.afterFailure(doc.attemptCount + 1, retriable);
    await this.options.store.finish(doc, attempt, next);
    const fields = { error: attempt.error, responseCode: attempt.responseCode };
    if (next.state === 'failed') log.warn({ ...fields, attempts: doc.attemptCount + 1 }, 'email failed');
    else log.info({ ...fields, delayMs: next.delayMs }, 'email attempt failed, retrying');
  }
}
