import type { BankHash__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/BankHash';
import type { HashBank__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/HashBank';
import type { HashMatch__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/HashMatch';
import type { RetroPass__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/RetroPass';
import type { HashQuarantine__Output } from '@vigil/proto/dist/generated/vigil/moderation/v1/HashQuarantine';
import { BankAction, HashKind, HashReview } from '@vigil/proto';
import type { Methods, ModeratorClient, RpcRequest, RpcResponse } from '../../grpc/moderator-client';
import {
  RetroPassView,
  type BankHashView,
  type HashBankView,
  type HashMatchView,
  type HashQuarantineView,
} from '../../routes/hash-banks/hash-banks.schema';

/** Who a hash bank command acts for: the caller's tenant and request (its id travels to the moderator). */
export interface BankCaller {
  moderator: ModeratorClient;
  tenantId: string;
  requestId?: string;
}

/** Calls the moderator for the caller's tenant. */
export function callFor<K extends Methods>(
  caller: BankCaller,
  method: K,
  request: Omit<RpcRequest<K>, 'tenantId'>,
): Promise<RpcResponse<K>> {
  const full = { ...request, tenantId: caller.tenantId } as RpcRequest<K>;
  return caller.moderator.call(method, full, { requestId: caller.requestId });
}

export function toBankView(bank: HashBank__Output): HashBankView {
  return {
    id: bank.id,
    name: bank.name,
    description: bank.description ?? null,
    kind: HashKind.parse(bank.kind),
    distance: bank.distance,
    policy: bank.policyId ?? null,
    action: BankAction.parse(bank.action),
    negative: bank.negative,
    enabled: bank.enabled,
    flood:
      bank.floodThreshold !== undefined && bank.floodThreshold !== null
        ? { threshold: bank.floodThreshold, windowSeconds: bank.floodWindowSeconds }
        : null,
    createdAt: bank.createdAt,
    updatedAt: bank.updatedAt,
  };
}

export function toRetroPassView(pass: RetroPass__Output): RetroPassView {
  return {
    id: pass.id,
    state: RetroPassView.shape.state.parse(pass.state),
    trigger: RetroPassView.shape.trigger.parse(pass.trigger),
    hashes: pass.hashes,
    scanned: pass.scanned,
    matched: pass.matched,
    flagged: pass.flagged,
    heldByHumans: pass.heldByHumans,
    error: pass.error ? RetroPassView.shape.error.unwrap().parse(pass.error) : null,
    createdAt: pass.createdAt,
    startedAt: pass.startedAt ?? null,
    finishedAt: pass.finishedAt ?? null,
  };
}

export function toHashView(hash: BankHash__Output): BankHashView {
  return {
    id: hash.id,
    bank: hash.bankId,
    hash: hash.value,
    metadata: stringRecord(hash.metadataJson),
    enabled: hash.enabled,
    review: HashReview.parse(hash.review),
    createdAt: hash.createdAt,
    updatedAt: hash.updatedAt,
  };
}

export function toMatchView(match: HashMatch__Output): HashMatchView {
  return {
    image: match.position,
    bank: { id: match.bankId, name: match.bankName },
    kind: HashKind.parse(match.kind),
    distance: match.distance,
    hashId: match.hashId,
    metadata: stringRecord(match.metadataJson),
    action: BankAction.parse(match.action),
    policy: match.policyId ?? null,
    ...(match.cancelledBy ? { cancelledBy: match.cancelledBy } : {}),
    ...(match.quarantined ? { quarantined: true } : {}),
  };
}

export function toQuarantineView(quarantine: HashQuarantine__Output): HashQuarantineView {
  return {
    hashId: quarantine.hashId,
    bank: { id: quarantine.bankId, name: quarantine.bankName },
    kind: HashKind.parse(quarantine.kind),
    state: quarantine.state === 'released' ? 'released' : 'quarantined',
    quarantine: quarantine.number,
    threshold: quarantine.threshold,
    windowSeconds: quarantine.windowSeconds,
    count: quarantine.count,
    held: quarantine.held,
    overflow: quarantine.overflow,
    since: quarantine.since,
    metadata: stringRecord(quarantine.metadataJson),
  };
}

/** Metadata JSON text (an object of strings) back to an object; anything else reads as empty. */
function stringRecord(json: string): Record<string, string> {
  try {
    const value = JSON.parse(json || '{}') as unknown;
    if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
    return Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v === 'string'));
  } catch {
    return {};
  }
}
