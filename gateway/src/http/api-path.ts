const API_PATH = /^\/+api\/+v1(\/|$)/i;

/**
 * Whether a request path is below the API prefix, read generously: any case, repeated slashes, percent-encoding. The
 * router only routes the exact prefix (it is case-sensitive and strict), so everything it could route is
 * authenticated, and near misses are refused with 401 rather than reaching the 404 handler with a body read.
 */
export function isApiPath(path: string): boolean {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // A malformed escape routes nowhere; the raw path still decides.
  }
  return API_PATH.test(path) || API_PATH.test(decoded);
}
