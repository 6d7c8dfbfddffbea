/**
 * How the services tell "the store is out of reach, try again" from "the store refused this". `isStoreUnavailable` is
 * the one classifier every service maps to its own error family; `isUnavailableServerError` reads what a server error
 * carries (`code`, `message` and the driver's `hasErrorLabel`).
 */
import { MongoError, MongoServerError } from 'mongodb';

interface ServerErrorLike {
  code?: unknown;
  message?: unknown;
  hasErrorLabel?: (label: string) => boolean;
}

/** MongoDB's codes for a server that cannot serve now (shutting down, stepping down, unreachable, timed out). */
const UNAVAILABLE_CODES = new Set([6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]);

/**
 * FerretDB answers a failure of its PostgreSQL backend as InternalError (code 1) with no label, its message naming
 * what the backend said: a refused or broken connection, a server starting up or shutting down, no connection slot
 * left (PostgreSQL's SQLSTATE classes 08, 57P and 53300), or a transaction that lost to a concurrent one after
 * FerretDB's own retries (serialization failure 40001, deadlock 40P01, lock not available 55P03): none is a refusal
 * of the operation, and the same command can succeed a moment later.
 */
const BACKEND_TRANSIENT =
  /failed to connect|connection refused|connection reset|broken pipe|unexpected EOF|conn closed|terminating connection|database system is (?:starting up|shutting down|in recovery mode|not yet accepting connections)|too many clients|remaining connection slots|SQLSTATE (?:08\w{3}|57P0\d|53300|40001|40P01|55P03)/i;

/** A server error that means the store cannot serve now, so the work should be tried again, not failed for good. */
export function isUnavailableServerError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message, hasErrorLabel } = err as ServerErrorLike;
  // A bulk write the driver broke off with a client-side error (a reset, a closed pool, no server) wraps it in a
  // MongoBulkWriteError, a server error by class, with no per-document errors and no code of its own.
  const { name, writeErrors } = err as { name?: unknown; writeErrors?: unknown };
  if (name === 'MongoBulkWriteError' && code === undefined && (!Array.isArray(writeErrors) || writeErrors.length === 0))
    return true;
  if (typeof hasErrorLabel === 'function') {
    const labelled = (label: string) => hasErrorLabel.call(err, label);
    if (labelled('RetryableWriteError') || labelled('TransientTransactionError') || labelled('ResetPool')) return true;
  }
  if (typeof code === 'number' && UNAVAILABLE_CODES.has(code)) return true;
  return typeof message === 'string' && BACKEND_TRANSIENT.test(message);
}

/** Node's codes for a connection that broke or could not be made. */
const NETWORK_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ETIMEDOUT', 'ENOTCONN', 'ECONNABORTED']);

/**
 * Whether a store operation failed because the store cannot serve now, so the work should wait and be tried again:
 * a socket error that reached the caller unwrapped (the driver wraps most), any client-side driver error (network,
 * server selection, pool cleared, topology closed), or a server error that says so (`isUnavailableServerError`). Any
 * other server error is a refusal of the operation itself.
 */
export function isStoreUnavailable(err: unknown): boolean {
  if (err instanceof Error && NETWORK_CODES.has((err as { code?: unknown }).code as string)) return true;
  if (!(err instanceof MongoError)) return false;
  return !(err instanceof MongoServerError) || isUnavailableServerError(err);
}

/**
 * A one-document write refused because a document with the same unique key (`_id` or a unique index) exists: code
 * 11000. Never true of a bulk write's error (`MongoBulkWriteError`, which carries its first write error's code even when
 * other documents failed otherwise or the command broke part way): what that proves is read by `provenInsertOutcomes`.
 */
export function isDuplicateKeyError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  if ((err as { name?: unknown }).name === 'MongoBulkWriteError') return false;
  return (err as { code?: unknown }).code === 11000;
}
