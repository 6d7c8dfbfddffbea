// A Stripe API for tests: Stripe's own stripe-mock (deploy/local/stripe-mock.js) behind a small recording proxy. The
// mock checks every request against Stripe's API description and answers as Stripe does; the proxy records what
// arrived and, when told to, answers in the mock's place with one of Stripe's errors (429, 5xx, an invalid account).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startStripeMock } from '../local/stripe-mock';

export interface StripeCall {
  method: string;
  path: string;
  /** The account id of `/v1/accounts/{id}`, decoded. */
  accountId?: string;
  authorization?: string;
  idempotencyKey?: string;
  contentType?: string;
  /** The form fields as sent. */
  form: Record<string, string>;
  /** What the caller was answered, and by whom. */
  status: number;
  injected: boolean;
  requestId?: string;
  /** When the call arrived and when its answer was sent (Date.now()). */
  receivedAt: number;
  answeredAt?: number;
}

export type InjectedFailure = 'rate_limited' | 'server_error' | 'unavailable' | 'invalid_account';

const FAILURES: Record<InjectedFailure, { status: number; error: Record<string, string> }> = {
  rate_limited: {
    status: 429,
    error: { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests hit the API too quickly.' },
  },
  server_error: { status: 500, error: { type: 'api_error', message: 'An unknown error occurred.' } },
  unavailable: { status: 503, error: { type: 'api_error', message: 'Stripe is temporarily unavailable.' } },
  invalid_account: {
    status: 400,
    error: {
      type: 'invalid_request_error',
      code: 'account_invalid',
      message: 'The provided key does not have access to this account, or the account does not exist.',
    },
  },
};

export interface StripeServer {
  url: string;
  calls: StripeCall[];
  /** Calls for one account, in arrival order. */
  callsFor(accountId: string): StripeCall[];
  /** The next calls for `accountId` get these answers, one each, instead of the mock's. */
  failNext(accountId: string, ...failures: InjectedFailure[]): void;
  /** Every call for `accountId` gets this answer until `failNext`/`failAlways` says otherwise (undefined: none). */
  failAlways(accountId: string, failure: InjectedFailure | undefined): void;
  /** The next call for `accountId` is answered `ms` later than it would be. */
  delayNext(accountId: string, ms: number): void;
  close(): Promise<void>;
}

export async function startStripe(): Promise<StripeServer> {
  const mock = await startStripeMock();
  const calls: StripeCall[] = [];
  const queued = new Map<string, InjectedFailure[]>();
  const always = new Map<string, InjectedFailure>();
  const delays = new Map<string, number>();
  let injectedCount = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      const match = /^\/v1\/accounts\/([^/?]+)$/.exec(path);
      const accountId = match?.[1] ? decodeURIComponent(match[1]) : undefined;
      const header = (name: string) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value[0] : value;
      };
      const call: StripeCall = {
        method: req.method ?? 'GET',
        path,
        ...(accountId !== undefined ? { accountId } : {}),
        authorization: header('authorization'),
        idempotencyKey: header('idempotency-key'),
        contentType: header('content-type'),
        form: Object.fromEntries(new URLSearchParams(body)),
        status: 0,
        injected: false,
        receivedAt: Date.now(),
      };
      calls.push(call);
      const delayMs = accountId !== undefined ? (delays.get(accountId) ?? 0) : 0;
      if (accountId !== undefined) delays.delete(accountId);
      const answer = (status: number, headers: Record<string, string>, text: string) =>
        setTimeout(() => {
          call.answeredAt = Date.now();
          res.writeHead(status, headers).end(text);
        }, delayMs);
      const failure = accountId !== undefined ? (queued.get(accountId)?.shift() ?? always.get(accountId)) : undefined;
      if (failure) {
        const { status, error } = FAILURES[failure];
        injectedCount += 1;
        const requestId = `req_injected${injectedCount}`;
        Object.assign(call, { status, injected: true, requestId });
        answer(status, { 'content-type': 'application/json', 'request-id': requestId }, JSON.stringify({ error }));
        return;
      }
      fetch(mock.url + path, {
        method: call.method,
        headers: Object.fromEntries(
          ['authorization', 'idempotency-key', 'content-type']
            .map((name) => [name, header(name)] as const)
            .filter((entry): entry is readonly [string, string] => entry[1] !== undefined),
        ),
        ...(call.method === 'GET' ? {} : { body }),
      })
        .then(async (reply) => {
          const text = await reply.text();
          const requestId = reply.headers.get('request-id') ?? undefined;
          Object.assign(call, { status: reply.status, requestId });
          answer(
            reply.status,
            {
              'content-type': reply.headers.get('content-type') ?? 'application/json',
              ...(requestId ? { 'request-id': requestId } : {}),
            },
            text,
          );
        })
        .catch(() => {
          call.status = 502;
          res.writeHead(502).end();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    callsFor: (accountId) => calls.filter((call) => call.accountId === accountId),
    failNext(accountId, ...failures) {
      queued.set(accountId, [...(queued.get(accountId) ?? []), ...failures]);
    },
    failAlways(accountId, failure) {
      if (failure) always.set(accountId, failure);
      else always.delete(accountId);
    },
    delayNext(accountId, ms) {
      delays.set(accountId, ms);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mock.stop();
    },
  };
}
