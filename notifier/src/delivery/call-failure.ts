import { SsrfRefusedError } from './ssrf';

/** Why an outbound call ended without an answer. */
export type CallFailure = 'timeout' | 'network_error' | 'ssrf_refused';

/**
 * Why an undici call ended without an answer, read from its error and the causes undici wraps it in (five deep at
 * most): an address the SSRF guard refused, a timeout of undici's own or of `signal`, or any other network error.
 */
export function callFailureOf(err: unknown, signal: AbortSignal): CallFailure {
  for (let cause: unknown = err, depth = 0; cause && depth < 5; depth += 1) {
    const code = (cause as { code?: string }).code;
    if (cause instanceof SsrfRefusedError || code === 'ERR_SSRF_REFUSED') return 'ssrf_refused';
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
      return 'timeout';
    }
    cause = (cause as { cause?: unknown }).cause;
  }
  return signal.aborted ? 'timeout' : 'network_error';
}
