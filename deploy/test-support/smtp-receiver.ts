import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface SmtpReceiver {
  /** Every message accepted, parsed. */
  received: ParsedMail[];
  /** RCPT TO commands seen, refused ones included. */
  rcptAttempts(): number;
  /** Listens on 127.0.0.1 at a port the system picks; resolves with it. */
  listen(): Promise<number>;
  close(): Promise<void>;
}

/**
 * A real SMTP server for the tests of emails, on 127.0.0.1: it accepts every message and keeps it parsed; while
 * `refuse()` answers true, RCPT TO gets a temporary failure (451), as a relay that is busy answers.
 */
export function smtpReceiver(refuse: () => boolean = () => false): SmtpReceiver {
  const received: ParsedMail[] = [];
  let rcptAttempts = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(_address, _session, callback) {
      rcptAttempts += 1;
      if (refuse()) {
        callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
        return;
      }
      callback();
    },
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          received.push(mail);
          callback();
        })
        .catch(callback);
    },
  });
  return {
    received,
    rcptAttempts: () => rcptAttempts,
    listen: () =>
      new Promise<number>((resolve) => {
        server.listen(0, '127.0.0.1', () => resolve((server.server.address() as AddressInfo).port));
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
