import nodemailer from 'nodemailer';
import type { RenderedEmail } from '../domain/email-render';

interface SmtpResult {
  ok: boolean;
  /** Worth another attempt later (a 4xx reply, a network failure); a 5xx reply is final. */
  retriable: boolean;
  durationMs: number;
  responseCode?: number;
  error?: 'rejected' | 'deferred' | 'timeout' | 'network_error' | 'auth_failed';
}

export interface SmtpSender {
  send(to: string, email: RenderedEmail): Promise<SmtpResult>;
  close(): void;
}

/**
 * One nodemailer SMTP transport per process (the deployment's relay, `SMTP_URL`). Errors are classified by their
 * SMTP reply code and nodemailer's error code, never by message text; nothing of the server's reply is kept, since
 * it often quotes the recipient.
 */
export function createSmtpSender(options: { url: string; from: string; timeoutMs: number }): SmtpSender {
  const transport = nodemailer.createTransport({
    url: options.url,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
  });
  return {
    async send(to, email) {
      const started = Date.now();
      try {
        await transport.sendMail({
          from: options.from,
          to,
          subject: email.subject,
          text: email.text,
          html: email.html,
        });
        return { ok: true, retriable: false, durationMs: Date.now() - started };
      } catch (err) {
        return { ok: false, durationMs: Date.now() - started, ...classify(err) };
      }
    },
    close: () => transport.close(),
  };
}

function classify(err: unknown): Pick<SmtpResult, 'retriable' | 'responseCode' | 'error'> {
  const { responseCode, code } = (err ?? {}) as { responseCode?: unknown; code?: unknown };
  // A relay whose credentials are wrong refuses everything until an operator fixes them: keep retrying.
  if (code === 'EAUTH') return { retriable: true, error: 'auth_failed' };
  if (typeof responseCode === 'number') {
    if (responseCode >= 500) return { retriable: false, responseCode, error: 'rejected' };
    return { retriable: true, responseCode, error: 'deferred' };
  }
  if (code === 'ETIMEDOUT') return { retriable: true, error: 'timeout' };
  return { retriable: true, error: 'network_error' };
}
