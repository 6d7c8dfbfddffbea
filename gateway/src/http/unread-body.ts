import type { Socket } from 'node:net';
import type { Context, Next } from 'koa';

/** How long, and how many bytes of it, a refused upload is read and dropped after the answer (nginx: 30 s and 5 s). */
const LINGER = { totalMs: 10_000, idleMs: 2_000, bytes: 64 * 1024 * 1024 } as const;

/**
 * An answer given before the request's body was read (a refused key, a body over the limit, a wrong content type, a
 * rate limit) closes the connection: Node would otherwise read and discard the rest of the body, however large it was
 * announced, to keep the connection alive, and the client could not send its next request on it until the upload
 * ended.
 *
 * It closes it the way nginx's lingering close does. Closing at once would leave the client's upload hitting a closed
 * socket: the kernel answers with a reset, which also throws away the answer the client had not read yet, so its HTTP
 * library reports a broken pipe instead of the 401/413/415/429 (Node's fetch did, for a third of 5 MB uploads). So,
 * once the answer is sent, only the sending side is shut (FIN), and whatever the client still sends is read and
 * dropped until it stops (or `LINGER` runs out: the time, a pause, or the bytes), then the socket is closed.
 */
export async function closeOnUnreadBody(ctx: Context, next: Next): Promise<void> {
  try {
    await next();
  } finally {
    if (!ctx.req.complete && hasBody(ctx)) {
      ctx.set('Connection', 'close');
      lingerOnClose(ctx.req.socket);
    }
  }
}

function hasBody(ctx: Context): boolean {
  const length = ctx.get('content-length');
  return ctx.get('transfer-encoding') !== '' || (length !== '' && length !== '0');
}

const lingering = new WeakSet<Socket>();

/**
 * Replaces what Node's server does with a connection that is not kept alive once its answer is written
 * (`socket.destroySoon()`: end, then destroy, which makes the kernel reset the connection on the next bytes in).
 */
function lingerOnClose(socket: Socket): void {
  if (lingering.has(socket)) return;
  lingering.add(socket);
  socket.destroySoon = function lingeringClose(this: Socket) {
    // The server's sockets allow half-open connections: end() sends FIN after the answer and keeps reading.
    this.end();
    let received = 0;
    const close = () => {
      clearTimeout(total);
      clearTimeout(idle);
      this.destroy();
    };
    const total = setTimeout(close, LINGER.totalMs);
    let idle = setTimeout(close, LINGER.idleMs);
    total.unref();
    idle.unref();
    this.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > LINGER.bytes) return close();
      clearTimeout(idle);
      idle = setTimeout(close, LINGER.idleMs);
      idle.unref();
    });
    // The client finished sending (or gave up): nothing more to wait for.
    this.once('end', close);
    this.once('close', () => {
      clearTimeout(total);
      clearTimeout(idle);
    });
    this.resume();
    return this;
  };
}
