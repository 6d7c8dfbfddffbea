import type { Statement } from './statements';
import { z } from 'zod';

/**
 * User emails (Iffy §7.2): which status changes send one, the templates a tenant may override, and the placeholders
 * they may use. The notifier renders and sends them; the gateway validates the templates a tenant stores.
 */
export const EmailKind = z.enum(['Suspended', 'Banned', 'Compliant']);
export type EmailKind = z.infer<typeof EmailKind>;

/**
 * Placeholders a template may use, written `{{name}}`. Values are plain text: the notifier escapes them in the HTML
 * part. `appealUrl` is empty unless the email is a Suspended one and appeals are on.
 */
const EMAIL_PLACEHOLDERS = ['username', 'name', 'platformName', 'appealUrl'] as const;
export type EmailPlaceholder = (typeof EMAIL_PLACEHOLDERS)[number];

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** Placeholders in `text` that are not in EMAIL_PLACEHOLDERS (a typo would otherwise reach users verbatim). */
export function unknownPlaceholders(text: string): string[] {
  const known = new Set<string>(EMAIL_PLACEHOLDERS);
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1] ?? '').filter((name) => !known.has(name));
}

const templateText = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((text) => unknownPlaceholders(text).length === 0, {
      message: `only the placeholders ${EMAIL_PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')} are allowed`,
    });

export const EmailTemplate = z.object({
  /** One line; line breaks are folded into spaces when sent. */
  subject: templateText(200),
  heading: templateText(200),
  /** Plain text; a blank line separates paragraphs. */
  body: templateText(5000),
});
export type EmailTemplate = z.infer<typeof EmailTemplate>;

/**
 * Defaults used for every kind a tenant has not overridden. Deliberately generic: they speak of an account and its
 * content, not of sales or payouts, so they fit a forum as well as a marketplace.
 */
export const DEFAULT_EMAIL_TEMPLATES: Readonly<Record<EmailKind, EmailTemplate>> = {
  Suspended: {
    subject: 'Your {{platformName}} account has been suspended',
    heading: 'Your account has been suspended',
    body:
      'Hello {{username}},\n\nYour account on {{platformName}} has been suspended because some of your content ' +
      'does not follow the rules of the platform. While your account is suspended, some features may be ' +
      'unavailable to you.\n\nIf you believe this is a mistake, you can ask for the decision to be reviewed.',
  },
  Banned: {
    subject: 'Your {{platformName}} account has been banned',
    heading: 'Your account has been banned',
    body:
      'Hello {{username}},\n\nYour account on {{platformName}} has been permanently banned because of repeated or ' +
      'serious violations of the rules of the platform.',
  },
  Compliant: {
    subject: 'Your {{platformName}} account has been reinstated',
    heading: 'Your account has been reinstated',
    body: 'Hello {{username}},\n\nYour account on {{platformName}} is in good standing again. Thank you for your patience.',
  },
};

/**
 * Emails to a reporter who gave an address (Art. 16(5) and 20(5) DSA): the outcome of their report, and of their
 * complaint about a decision not to act. The address is read at send time from the report's contact, which is erased
 * when the tenant's `reporterEmailRetentionDays` run out; after that nothing is sent.
 */
export const ReporterEmailKind = z.enum(['ReportDecided', 'ComplaintDecided']);
export type ReporterEmailKind = z.infer<typeof ReporterEmailKind>;

type EmailState = 'pending' | 'sending' | 'sent' | 'failed' | 'skipped';

/** One SMTP attempt. No address, subject or server text: a server's reply often quotes the recipient. */
export interface EmailAttempt {
  at: Date;
  durationMs: number;
  /** SMTP reply code, when the server answered. */
  responseCode?: number;
  /** `rejected`, `deferred`, `timeout`, `network_error`, `auth_failed`, `user_unavailable`. */
  error?: string;
}

/**
 * Collection `email_messages`, written by the notifier only: one document per (UserStatusChanged event, user). The
 * event names one user, so `_id` is derived from the event id and a re-consumed event inserts nothing new. Holds no
 * address and no content: the address is read from the user at send time, the content rendered then. The gateway
 * reads it as the user's email log.
 */
export interface EmailMessageDoc {
  _id: string;
  tenantId: string;
  /** The user told; empty for an email to a reporter (`reportId`). */
  userId: string;
  /** A reporter's email: the report whose contact holds the address. */
  reportId?: string;
  eventId: string;
  kind: EmailKind | ReporterEmailKind;
  /** A reporter's email: the report's outcome in words (its decision and reason), rendered after the body. */
  outcome?: string[];
  /** A reporter's email of a decision not to act: the complaint stays open until then, and its link lives as long. */
  complaintOpenUntil?: Date;
  state: EmailState;
  /**
   * Why nothing was sent (state `skipped`): `no_email`, `expired` (no notifier with SMTP attempted it in time), or
   * `not_configured` (written by releases that planned emails as skipped on a notifier without SMTP).
   */
  skipReason?: string;
  attemptCount: number;
  attempts: EmailAttempt[];
  dueAt: Date;
  /** The notifier's due-queue time bucket while pending or sending (internal). */
  due?: string;
  leaseUntil?: Date;
  leaseId?: string;
  lastError?: string;
  /**
   * The status change's statement of reasons (Art. 17 DSA), as planned from its event: sent with the email. It holds
   * ids, the policy's text and the decision's reasons, no address and no content.
   */
  statement?: Statement;
  sentAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}
