import { callFailureOf } from './call-failure';
import { SsrfRefusedError } from './ssrf';

const wrapped = (cause: unknown, depth: number): unknown =>
  depth === 0 ? cause : Object.assign(new Error('fetch failed'), { cause: wrapped(cause, depth - 1) });
const coded = (code: string) => Object.assign(new Error(code), { code });
const live = new AbortController().signal;
const aborted = AbortSignal.abort();

describe('callFailureOf', () => {
  it.each([
    ['an SSRF refusal', new SsrfRefusedError('10.0.0.1'), live, 'ssrf_refused'],
    ['an SSRF refusal by its code, two causes deep', wrapped(coded('ERR_SSRF_REFUSED'), 2), live, 'ssrf_refused'],
    ['a headers timeout', coded('UND_ERR_HEADERS_TIMEOUT'), live, 'timeout'],
    ['a body timeout one cause deep', wrapped(coded('UND_ERR_BODY_TIMEOUT'), 1), live, 'timeout'],
    ['a connect timeout', coded('UND_ERR_CONNECT_TIMEOUT'), live, 'timeout'],
    ['a refused connection', coded('ECONNREFUSED'), live, 'network_error'],
    ['a refused connection once the signal aborted', coded('ECONNREFUSED'), aborted, 'timeout'],
    ['a timeout deeper than five causes', wrapped(coded('UND_ERR_HEADERS_TIMEOUT'), 5), live, 'network_error'],
  ])('reads %s as %s', (_what, err, signal, expected) => {
    expect(callFailureOf(err, signal)).toBe(expected);
  });
});
