import { waitFor } from '../test-support';

export type Kind = 'ingest' | 'moderate';

export interface Sent {
  clientId: string;
  kind: Kind;
  gateway: number;
  profane: boolean;
  /** Seconds into the test when it was sent and when it was answered. */
  sentAt?: number;
  answeredAt?: number;
}

export interface LoadOptions {
  /** The API base of gateway `k` (`http://127.0.0.1:<port>/api/v1`). */
  api: (k: number) => string;
  /** How many gateways the steady load alternates between. */
  gateways: number;
  /** The tenant's API key headers. */
  headers: Record<string, string>;
  /** Every this-many-th record is profane and has a user of its own, so it ends Flagged and suspends that user. */
  profaneEvery: number;
  /** When the test started (Date.now()): `sentAt` and `answeredAt` count from it. */
  started: number;
}

/**
 * The end-to-end tests' client load: ingests and /moderate calls through the gateways, each request's outcome kept by
 * its clientId. An ingest answered 202 is accepted and a /moderate answered 200 is answered (both are promises the
 * test then checks); any other answer is counted by status and message; a request refused or cut off at the
 * connection is counted as unreachable, per gateway.
 */
export class Load {
  readonly accepted = new Map<string, Sent>();
  readonly answered = new Map<string, Sent>();
  readonly unreachable: number[];
  /** Other answers, by `<status> <error message>`. */
  readonly failures = new Map<string, number>();
  /** Requests that ended (answered or unreachable). */
  completed = 0;
  /** When each request that ended was sent (Date.now()), in the order they ended. */
  private readonly endedSentAt: number[] = [];
  private next = 0;
  private inFlight = 0;
  private tick = 0;
  private pacer?: NodeJS.Timeout;
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly options: LoadOptions) {
    this.unreachable = Array.from({ length: options.gateways }, () => 0);
  }

  /** Sends one request of `kind` to gateway `k`; resolves once it ended, whatever its outcome. */
  async send(kind: Kind, k: number): Promise<void> {
    const { api, headers, profaneEvery, started } = this.options;
    const i = this.next++;
    const sentAt = Date.now();
    const profane = i % profaneEvery === 0;
    const clientId = `c-${i}`;
    const sent: Sent = { clientId, kind, gateway: k, profane, sentAt: (sentAt - started) / 1000 };
    const body = JSON.stringify({
      clientId,
      name: `Item ${i}`,
      entity: 'post',
      content: { text: profane ? `item ${i} is fucking awful` : `item ${i} is lovely` },
      ...(profane ? { user: { clientId: `u-${i}`, email: userEmail(i), paymentsAccountId: paymentsAccount(i) } } : {}),
    });
    let res: Response;
    try {
      res = await fetch(`${api(k)}/${kind}`, { method: 'POST', headers, body });
    } catch {
      // Refused or cut off: the gateway is down. Not an answer, so not accepted.
      this.unreachable[k]! += 1;
      this.completed += 1;
      this.endedSentAt.push(sentAt);
      return;
    }
    const text = await res.text().catch(() => '');
    this.completed += 1;
    this.endedSentAt.push(sentAt);
    sent.answeredAt = (Date.now() - started) / 1000;
    if (kind === 'ingest' && res.status === 202) this.accepted.set(clientId, sent);
    else if (kind === 'moderate' && res.status === 200) this.answered.set(clientId, sent);
    else {
      let message = '';
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? '';
      } catch {
        // not an error envelope
      }
      const label = `${res.status} ${message}`;
      this.failures.set(label, (this.failures.get(label) ?? 0) + 1);
    }
  }

  /**
   * Starts the steady load: a request every 1/`rate` s, in turn to each gateway, two ingests for each /moderate, at
   * most `maxInFlight` in flight (a slow stack is not flooded).
   */
  start(rate: number, maxInFlight = 64): void {
    this.pacer = setInterval(() => {
      if (this.inFlight >= maxInFlight) return;
      this.tick += 1;
      const kind: Kind = this.tick % 3 === 0 ? 'moderate' : 'ingest';
      this.inFlight += 1;
      const p = this.send(kind, this.tick % this.options.gateways).finally(() => {
        this.inFlight -= 1;
        this.pending.delete(p);
      });
      this.pending.add(p);
    }, 1000 / rate);
  }

  /** Stops the steady load; resolves once its requests in flight ended. */
  async stop(): Promise<void> {
    clearInterval(this.pacer);
    this.pacer = undefined;
    await Promise.all([...this.pending]);
  }

  /** Waits until `n` requests have ended in all. */
  async after(n: number, what: string, timeoutMs = 120_000): Promise<void> {
    await waitFor(() => this.completed >= n, { timeoutMs, intervalMs: 50, what });
  }

  /**
   * Waits until `n` requests sent at `since` (Date.now()) or later have ended: load that did not wait out a fault
   * which was on before `since`.
   */
  async afterSentSince(since: number, n: number, what: string, timeoutMs = 120_000): Promise<void> {
    await waitFor(() => this.endedSentAt.filter((sentAt) => sentAt >= since).length >= n, {
      timeoutMs,
      intervalMs: 50,
      what,
    });
  }

  /** Every accepted ingest and answered /moderate, by clientId. */
  expected(): Map<string, Sent> {
    return new Map([...this.accepted, ...this.answered]);
  }

  /** The number `i` of each expected profane record (its user is `u-<i>`), whose user must have been suspended. */
  suspensions(): string[] {
    return [...this.expected().values()].filter((sent) => sent.profane).map((sent) => sent.clientId.slice(2));
  }
}

/** The email address of the user of profane record `i`. */
export const userEmail = (i: number | string): string => `u-${i}@example.test`;
/** The payments account of the user of profane record `i`. */
export const paymentsAccount = (i: number | string): string => `acct_u${i}`;
