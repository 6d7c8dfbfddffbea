// A TCP relay between services and their MongoDB-wire store, for tests that break the store's connections on purpose.
// Services get `relay.url` as MONGO_URL (the real URL with the relay's address: same database and options). While
// no fault is on, it forwards both ways; `setFault` switches one on or off at run time:
//
// - `reset`: every open connection is reset (RST to the service, both sides closed), and so is each new one while it
//   lasts, as when the store or the network between dies.
// - `delay`: each reply the store sends is held `delayMs` before the service gets it (the command has run), longer
//   than the services' deadlines that depend on a store answer, as when the store stalls.
// - `drop`: requests reach the store, which runs them; the reply to a write (insert, update, delete, findAndModify)
//   is then discarded and the service's connection reset, so the write happened but the service never learns it.
//   Reads go through, so the services keep working and write often while it lasts.
//
// Wire messages are length-prefixed (int32 little-endian messageLength, then requestID, responseTo and opCode), so
// the relay cuts the store's stream into whole replies and names each by the command it answers.
import net from 'node:net';

export type StoreFault = 'reset' | 'delay' | 'drop';

export interface StoreRelayCounts {
  /** Connections the services opened to the relay. */
  accepted: number;
  /** Open connections reset when `reset` was switched on. */
  reset: number;
  /** New connections reset at once while `reset` was on. */
  refused: number;
  /** Replies held `delayMs` by `delay`. */
  delayed: number;
  /** Replies discarded by `drop` (each reset its connection), by the command they answered. */
  dropped: Record<string, number>;
}

export interface StoreRelay {
  /** The store's URL through the relay: same database name and options as the real one. */
  readonly url: string;
  readonly port: number;
  readonly fault: StoreFault | undefined;
  /** Switches a fault on (replacing the one that was on) or, with `undefined`, off. */
  setFault(fault: StoreFault | undefined): void;
  /** A copy of what the faults did so far. */
  counts(): StoreRelayCounts;
  /** Connections open now. */
  open(): number;
  /** Replies waiting to be written (held by `delay`, or queued behind one that is). */
  held(): number;
  close(): Promise<void>;
}

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_COMPRESSED = 2012;
const OP_MSG = 2013;
/** A message longer than this is not a wire message: the stream is out of step (MongoDB's maximum is 48 MB). */
const MAX_MESSAGE = 64 * 1024 * 1024;
/** The commands whose replies `drop` discards by default: the writes. */
export const WRITE_COMMANDS: readonly string[] = ['insert', 'update', 'delete', 'findAndModify'];

/** The number of replies `drop` discarded over every command (`dropped` sums). */
export function droppedTotal(counts: StoreRelayCounts): number {
  return Object.values(counts.dropped).reduce((sum, n) => sum + n, 0);
}

/**
 * The command a request carries: the first key of its command document (OP_MSG section 0, or the query of a legacy
 * OP_QUERY handshake); `compressed` or `unknown` when it cannot be read.
 */
export function commandName(message: Buffer): string {
  if (message.length < 21) return 'unknown';
  const opCode = message.readInt32LE(12);
  let doc: number;
  if (opCode === OP_MSG) {
    // flagBits (4 bytes), then the first section: kind 0 is the command's body.
    if (message[20] !== 0) return 'unknown';
    doc = 21;
  } else if (opCode === OP_QUERY) {
    // flags, fullCollectionName (a C string), numberToSkip, numberToReturn, then the query.
    const end = message.indexOf(0, 20);
    if (end < 0) return 'unknown';
    doc = end + 1 + 8;
  } else {
    return opCode === OP_COMPRESSED ? 'compressed' : 'unknown';
  }
  // BSON: int32 size, then elements of (type byte, name as a C string, value).
  const nameStart = doc + 5;
  const nameEnd = message.indexOf(0, nameStart);
  if (nameStart > message.length || nameEnd < 0) return 'unknown';
  return message.toString('utf8', nameStart, nameEnd);
}

/** Cuts a byte stream into whole wire messages. */
class MessageCutter {
  private buffer: Buffer = Buffer.alloc(0);

  /** The messages `chunk` completes, in order; throws when the stream is not wire messages. */
  push(chunk: Buffer): Buffer[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const messages: Buffer[] = [];
    while (this.buffer.length >= 4) {
      const length = this.buffer.readInt32LE(0);
      if (length < 16 || length > MAX_MESSAGE) throw new Error(`not a wire message (length ${length})`);
      if (this.buffer.length < length) break;
      messages.push(this.buffer.subarray(0, length));
      this.buffer = this.buffer.subarray(length);
    }
    return messages;
  }
}

interface Link {
  client: net.Socket;
  server: net.Socket;
  /** Store replies not yet written to the client, in order, each with when it may go. */
  queue: Array<{ message: Buffer; at: number }>;
  timer?: NodeJS.Timeout;
  closed: boolean;
}

/**
 * Starts a relay on 127.0.0.1 (a free port) to the single host of `mongoUrl` (`mongodb://`, one host). `delayMs` is
 * how long `delay` holds each reply; `dropCommands`, the commands whose replies `drop` discards (default: the writes).
 */
export async function startStoreRelay(options: {
  mongoUrl: string;
  delayMs: number;
  dropCommands?: readonly string[];
}): Promise<StoreRelay> {
  const dropped = new Set(options.dropCommands ?? WRITE_COMMANDS);
  const match = /^mongodb:\/\/([^@/?]*@)?([^/?]+)(.*)$/.exec(options.mongoUrl);
  if (!match) throw new Error('the store relay needs a mongodb:// URL');
  const [, credentials = '', hosts = '', rest = ''] = match;
  if (hosts.includes(',')) throw new Error('the store relay stands for one host; the URL names several');
  const at = hosts.lastIndexOf(':');
  const target = {
    host: (at > 0 ? hosts.slice(0, at) : hosts).replace(/^\[|\]$/g, ''),
    port: at > 0 ? Number(hosts.slice(at + 1)) : 27017,
  };

  let fault: StoreFault | undefined;
  const links = new Set<Link>();
  const counts: StoreRelayCounts = { accepted: 0, reset: 0, refused: 0, delayed: 0, dropped: {} };

  const cut = (link: Link) => {
    if (link.closed) return;
    link.closed = true;
    clearTimeout(link.timer);
    link.queue = [];
    links.delete(link);
    // An RST, not a FIN: the service sees its connection fail, not a clean close it might read as a reply's end.
    if (!link.client.destroyed) link.client.resetAndDestroy();
    if (!link.server.destroyed) link.server.destroy();
  };

  /** Writes the queued replies that are due, in order; sets a timer for the next one. */
  const flush = (link: Link) => {
    clearTimeout(link.timer);
    link.timer = undefined;
    const now = Date.now();
    while (!link.closed && link.queue.length > 0 && link.queue[0]!.at <= now) {
      link.client.write(link.queue.shift()!.message);
    }
    const head = link.queue[0];
    if (!link.closed && head) link.timer = setTimeout(() => flush(link), head.at - now);
  };

  const server = net.createServer((client) => {
    counts.accepted += 1;
    if (fault === 'reset') {
      counts.refused += 1;
      client.on('error', () => undefined);
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target);
    const link: Link = { client, server: upstream, queue: [], closed: false };
    links.add(link);
    /** The command each request carries, by requestID: what a reply (its responseTo) answers. */
    const commands = new Map<number, string>();
    const requests = new MessageCutter();
    const replies = new MessageCutter();

    client.on('data', (chunk: Buffer) => {
      try {
        for (const message of requests.push(chunk)) commands.set(message.readInt32LE(4), commandName(message));
      } catch {
        return cut(link);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      let messages: Buffer[];
      try {
        messages = replies.push(chunk);
      } catch {
        return cut(link);
      }
      for (const message of messages) {
        if (link.closed) return;
        const responseTo = message.readInt32LE(8);
        const command = commands.get(responseTo) ?? 'unknown';
        commands.delete(responseTo);
        // A reply with moreToCome is followed by others answering it (exhaust cursors, streamed hello).
        commands.set(message.readInt32LE(4), command);
        const opCode = message.readInt32LE(12);
        if (fault === 'drop' && dropped.has(command) && (opCode === OP_MSG || opCode === OP_REPLY)) {
          counts.dropped[command] = (counts.dropped[command] ?? 0) + 1;
          return cut(link);
        }
        const delayed = fault === 'delay';
        if (delayed) counts.delayed += 1;
        link.queue.push({ message, at: Date.now() + (delayed ? options.delayMs : 0) });
      }
      flush(link);
    });
    for (const socket of [client, upstream]) {
      socket.on('error', () => cut(link));
      socket.on('close', () => cut(link));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;

  return {
    url: `mongodb://${credentials}127.0.0.1:${port}${rest}`,
    port,
    get fault() {
      return fault;
    },
    setFault(next) {
      fault = next;
      if (next !== 'reset') return;
      for (const link of [...links]) {
        counts.reset += 1;
        cut(link);
      }
    },
    counts: () => ({ ...counts, dropped: { ...counts.dropped } }),
    open: () => links.size,
    held: () => [...links].reduce((n, link) => n + link.queue.length, 0),
    async close() {
      fault = undefined;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const link of [...links]) cut(link);
      await closed;
    },
  };
}
