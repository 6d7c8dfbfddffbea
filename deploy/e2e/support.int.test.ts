import net from 'node:net';
import { startMailReceiver } from './support';
import { waitFor } from '../test-support';

/** Sends SMTP commands one reply at a time; resolves with the socket once each was answered. */
async function smtpUpTo(port: number, commands: string[]): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let replies = 0;
  let text = '';
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    // A reply ends with a line whose code is followed by a space (`250-` lines continue it).
    for (let end = text.indexOf('\r\n'); end >= 0; end = text.indexOf('\r\n')) {
      const line = text.slice(0, end);
      text = text.slice(end + 2);
      if (!/^\d{3} /.test(line)) continue;
      replies += 1;
      const next = commands[replies - 1];
      if (next !== undefined) socket.write(`${next}\r\n`);
    }
  });
  await waitFor(() => replies > commands.length, { timeoutMs: 10_000, what: 'the SMTP replies' });
  return socket;
}

describe('mail receiver', () => {
  it('records a client that resets its connection in the middle of a message, and keeps receiving', async () => {
    const mail = await startMailReceiver();
    try {
      const port = Number(new URL(mail.url).port);
      const socket = await smtpUpTo(port, [
        'EHLO sender.test',
        'MAIL FROM:<a@sender.test>',
        'RCPT TO:<b@example.test>',
      ]);
      socket.resetAndDestroy();
      await waitFor(() => mail.errors.includes('ECONNRESET'), { timeoutMs: 10_000, what: 'the reset recorded' });
      const next = await smtpUpTo(port, [
        'EHLO sender.test',
        'MAIL FROM:<a@sender.test>',
        'RCPT TO:<c@example.test>',
        'DATA',
        'Subject: hi\r\n\r\nhello\r\n.',
        'QUIT',
      ]);
      next.destroy();
      expect(mail.received.map((message) => message.to)).toEqual([['c@example.test']]);
    } finally {
      await mail.close();
    }
  });
});
