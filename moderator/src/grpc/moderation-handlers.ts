import type { ModerationServiceHandlers } from '@vigil/proto';
import { createHashBankHandlers } from '../hash-banks/hash-bank-handlers';
import { quarantineHandlers } from '../hash-banks/quarantine/quarantine-handlers';
import { createHashFeedHandlers } from '../hash-banks/feeds/feed-handlers';
import { appealHandlers } from './appeals.handlers';
import { recordHandlers } from './records.handlers';
import { reportHandlers } from './reports.handlers';
import type { HandlerDeps } from './unary';
import { userHandlers } from './users.handlers';

/**
 * Every RPC of ModerationService, one file per resource. Callers hold the shared token (the server's interceptor
 * checked it) and are trusted to name the right tenant, as the gateway does after authenticating an API key; a tenant
 * that does not exist is refused (PERMISSION_DENIED, see `unary.ts`). Requests are still checked for shape, since a
 * malformed call must get INVALID_ARGUMENT, not a crash. Nothing here logs request fields other than ids.
 */
export function createModerationHandlers(deps: HandlerDeps): ModerationServiceHandlers {
  return {
    ...createHashBankHandlers(deps),
    ...quarantineHandlers(deps),
    ...createHashFeedHandlers(deps),
    ...recordHandlers(deps),
    ...userHandlers(deps),
    ...appealHandlers(deps),
    ...reportHandlers(deps),
  };
}
