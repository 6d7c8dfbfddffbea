import type { ModerationServiceHandlers } from '@vigil/proto';
import type { HashQuarantine } from '@vigil/proto/dist/generated/vigil/moderation/v1/HashQuarantine';
import { FailedPreconditionError } from '../../domain/errors';
import { required, unary, type HandlerDeps } from '../../grpc/unary';
import type { QuarantineUseCases, QuarantineView } from './quarantine-use-cases';

type QuarantineMethods = 'ListHashQuarantines' | 'ReleaseHashQuarantine' | 'DismissHashQuarantine';

/** The flood quarantine's methods of ModerationService (docs/hash-banks.md, "Flood quarantine"). */
export function quarantineHandlers(deps: HandlerDeps): Pick<ModerationServiceHandlers, QuarantineMethods> {
  const quarantine = (): QuarantineUseCases => {
    if (!deps.hashQuarantine) throw new FailedPreconditionError('hash banks are not enabled on this moderator');
    return deps.hashQuarantine;
  };
  const hashId = (request: { hashId?: string }) => required(request.hashId, 'hash_id');
  return {
    ListHashQuarantines: unary(deps, 'ListHashQuarantines', async (_request, tenantId) => ({
      quarantines: (await quarantine().list(tenantId)).map(toQuarantineMessage),
    })),
    ReleaseHashQuarantine: unary(deps, 'ReleaseHashQuarantine', async (request, tenantId) =>
      quarantine().release(tenantId, hashId(request)),
    ),
    DismissHashQuarantine: unary(deps, 'DismissHashQuarantine', async (request, tenantId) =>
      quarantine().dismiss(tenantId, hashId(request)),
    ),
  };
}

function toQuarantineMessage({ quarantine, metadata, held }: QuarantineView): HashQuarantine {
  return {
    hashId: quarantine._id,
    bankId: quarantine.bankId,
    bankName: quarantine.bankName,
    kind: quarantine.kind,
    state: quarantine.state,
    number: quarantine.n,
    threshold: quarantine.threshold,
    windowSeconds: quarantine.windowSeconds,
    count: quarantine.count,
    held,
    overflow: quarantine.overflow,
    since: quarantine.since.toISOString(),
    metadataJson: JSON.stringify(metadata),
  };
}
