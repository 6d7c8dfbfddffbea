import type * as grpc from '@grpc/grpc-js';
import { CONFIG_CONFIRMED_METADATA, CONFIG_VERSION_METADATA, ulid, type TenantVersions } from '@vigil/proto';
import { parseConfigVersion } from './config-version';
import type { Logger } from 'pino';
import { UnavailableError, ValidationError } from '../domain/errors';
import type { HashBankUseCases } from '../hash-banks/hash-bank-use-cases';
import type { QuarantineUseCases } from '../hash-banks/quarantine/quarantine-use-cases';
import type { FeedUseCases } from '../hash-banks/feeds/feed-use-cases';
import type { Queries } from '../service/queries';
import type { UseCases } from '../service/use-cases';
import type { KnownTenants } from '../store/known-tenants';
import { toServiceError } from './errors';
import type { KeyedLimit } from './keyed-limit';
import type { TenantActivity } from './tenant-activity';

/** What the handlers of every resource share. */
export interface HandlerDeps {
  /** Hash banks (hash-banks/): without them, their methods answer failed_precondition. */
  hashBanks?: HashBankUseCases;
  /** The hash banks' flood quarantine (hash-banks/quarantine/), with them. */
  hashQuarantine?: QuarantineUseCases;
  /** Hash feeds (hash-banks/feeds/): without them, their methods answer failed_precondition. */
  hashFeeds?: FeedUseCases;
  useCases: UseCases;
  queries: Queries;
  tenants: KnownTenants;
  /** Each call's tenant configuration version (gRPC metadata) is recorded here before the call is handled. */
  versions: TenantVersions;
  log: Logger;
  /**
   * Moderate calls in flight per tenant, weighted by size (see moderateWeight): the calls beyond wait their turn, so
   * one tenant's burst of large records queues behind itself instead of crowding every process the others need.
   */
  moderateLimit: KeyedLimit;
  /** Calls in flight per tenant (every method): a heavy Moderate call yields to the other tenants' calls. */
  activity: TenantActivity;
  /**
   * A Moderate call heavier than one unit (over 8 KiB of text and metadata) waits at most this long, milliseconds,
   * for a moment when no other tenant's call is in flight; 0 never waits.
   */
  heavyYieldMs: number;
  /** A heavy call begins to wait (`waiting` +1) and ends its wait: how, and after how long (seconds). */
  onYield?: { begin: () => void; end: (outcome: 'idle' | 'bound' | 'aborted', seconds: number) => void };
}

export function required(value: string | undefined, path: string): string {
  if (!value) throw new ValidationError(`${path} is required`, { path });
  return value;
}

export function oneOf<T extends string>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
  value: string,
  path: string,
): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ValidationError(`${path} is not an allowed value`, { path });
  return parsed.data;
}

/**
 * A page of the read model as a list answer: its items as messages under `field`, and whether more follow. (The list
 * queries take a list request as it is: their paging and filter fields are named as in the proto.)
 */
export function listAnswer<T, M, F extends string>(
  field: F,
  page: { items: T[]; hasMore: boolean },
  toMessage: (item: T) => M,
): Record<F, M[]> & { hasMore: boolean } {
  return { [field]: page.items.map(toMessage), hasMore: page.hasMore } as Record<F, M[]> & { hasMore: boolean };
}

/** The caller's request id, or a new correlation id. */
export const correlation = (requestId?: string): string => requestId || ulid();

/** What every human decision carries: why, who, and a correlation id of its own. */
export const byHuman = (request: { reason: string; actor: string }) => ({
  reason: request.reason,
  actor: request.actor,
  correlationId: correlation(),
});

/** A moderation id a caller may choose: `mod_` and a ULID, as the moderator makes them. */
const MODERATION_ID = /^mod_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The caller's moderation id, if it gave one; ValidationError when it is not `mod_` and a ULID. */
export function chosenModerationId(value: string | undefined): string | undefined {
  const moderationId = value || undefined;
  if (moderationId !== undefined && !MODERATION_ID.test(moderationId)) {
    throw new ValidationError('moderation_id must be mod_ and a ULID', { path: 'moderation_id' });
  }
  return moderationId;
}

/** The call's deadline in epoch milliseconds, if the caller set one. */
function deadlineOf(call: grpc.ServerUnaryCall<unknown, unknown>): number | undefined {
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(at) ? at : undefined;
}

/**
 * Wraps one async handler: checks that the request names a tenant that exists (and counts it as active for the
 * Moderate share), then hands the handler the request and that tenant, and resolves the callback with the value, or
 * with a gRPC status from the error mapping.
 */
export function unary<Req extends { tenantId?: string }, Res>(
  { log, tenants, versions, moderateLimit, activity }: HandlerDeps,
  method: string,
  handle: (request: Req, tenantId: string, signal: AbortSignal, deadline: number | undefined) => Promise<Res>,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    // The caller's deadline passed or it cancelled: work still waiting for it (engine checks in a queue) is dropped.
    const gone = new AbortController();
    // grpc-js also tells of a call's end after its answer: nothing waits then, and no error (with its stack) is made.
    let answered = false;
    call.once('cancelled', () => {
      if (!answered) gone.abort(new UnavailableError('the caller gave up (deadline passed or cancelled)', { method }));
    });
    Promise.resolve()
      .then(() => required(call.request.tenantId, 'tenant_id'))
      .then(async (tenantId) => {
        await tenants.assertKnown(tenantId);
        const version = parseConfigVersion(call.metadata.get(CONFIG_VERSION_METADATA)[0]);
        if (call.metadata.get(CONFIG_CONFIRMED_METADATA)[0] === '1') versions.confirm(tenantId, version);
        else versions.observe(tenantId, version);
        moderateLimit.touch(tenantId);
        const leave = activity.enter(tenantId);
        try {
          return await handle(call.request, tenantId, gone.signal, deadlineOf(call));
        } finally {
          leave();
        }
      })
      .then(
        (response) => {
          answered = true;
          callback(null, response);
        },
        (err: unknown) => {
          answered = true;
          callback(toServiceError(err, log, method));
        },
      );
  };
}
