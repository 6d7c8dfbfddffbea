import type { HashMatchRecord, ModerationServiceHandlers } from '@vigil/proto';
import type { HashMatch } from '@vigil/proto/dist/generated/vigil/moderation/v1/HashMatch';
import type { BankHash } from '@vigil/proto/dist/generated/vigil/moderation/v1/BankHash';
import type { HashBank } from '@vigil/proto/dist/generated/vigil/moderation/v1/HashBank';
import type { RetroPass } from '@vigil/proto/dist/generated/vigil/moderation/v1/RetroPass';
import { FailedPreconditionError } from '../domain/errors';
import { required, unary, type HandlerDeps } from '../grpc/unary';
import type { BankDoc, HashDoc } from './hash-bank-store';
import type { HashBankUseCases } from './hash-bank-use-cases';
import type { RetroPassDoc } from './retro/retro-pass-store';

type HashBankMethods =
  | 'CreateHashBank'
  | 'GetHashBank'
  | 'ListHashBanks'
  | 'UpdateHashBank'
  | 'DeleteHashBank'
  | 'AddBankHashes'
  | 'ListBankHashes'
  | 'GetBankHash'
  | 'UpdateBankHash'
  | 'WithdrawBankHash'
  | 'LookupHashes';

/** The hash bank methods of ModerationService, each checked and translated like the others (see `unary`). */
export function createHashBankHandlers(deps: HandlerDeps): Pick<ModerationServiceHandlers, HashBankMethods> {
  const banks = (): HashBankUseCases => {
    if (!deps.hashBanks) throw new FailedPreconditionError('hash banks are not enabled on this moderator');
    return deps.hashBanks;
  };
  const bankId = (request: { bankId?: string }) => required(request.bankId, 'bank_id');
  const hashId = (request: { hashId?: string }) => required(request.hashId, 'hash_id');
  return {
    CreateHashBank: unary(deps, 'CreateHashBank', async (request, tenantId) =>
      toBankMessage(
        await banks().createBank(tenantId, {
          name: request.name ?? '',
          description: request.description,
          kind: request.kind ?? '',
          distance: request.distance,
          policyId: request.policyId,
          action: request.action ?? '',
          negative: request.negative ?? false,
          enabled: request.enabled,
          floodThreshold: request.floodThreshold,
          floodWindowSeconds: request.floodWindowSeconds,
        }),
      ),
    ),
    GetHashBank: unary(deps, 'GetHashBank', async (request, tenantId) => {
      const bank = await banks().getBank(tenantId, bankId(request));
      const pass = await banks().lastRetroPass(tenantId, bank._id);
      return { ...toBankMessage(bank), ...(pass ? { lastRetroPass: toRetroPassMessage(pass) } : {}) };
    }),
    ListHashBanks: unary(deps, 'ListHashBanks', async (_request, tenantId) => ({
      banks: (await banks().listBanks(tenantId)).map(toBankMessage),
    })),
    UpdateHashBank: unary(deps, 'UpdateHashBank', async (request, tenantId) =>
      toBankMessage(
        await banks().updateBank(tenantId, bankId(request), {
          name: request.name,
          description: request.clearDescription ? null : request.description,
          distance: request.distance,
          policyId: request.clearPolicy ? null : request.policyId,
          action: request.action,
          negative: request.negative,
          enabled: request.enabled,
          floodThreshold: request.clearFlood ? null : request.floodThreshold,
          floodWindowSeconds: request.floodWindowSeconds,
        }),
      ),
    ),
    DeleteHashBank: unary(deps, 'DeleteHashBank', async (request, tenantId) => {
      await banks().deleteBank(tenantId, bankId(request));
      return {};
    }),
    AddBankHashes: unary(deps, 'AddBankHashes', async (request, tenantId) => {
      const result = await banks().addHashes(tenantId, bankId(request), {
        hashes: (request.hashes ?? []).map((hash) => ({ value: hash.value ?? '', metadataJson: hash.metadataJson })),
        csv: request.csv,
      });
      return { added: result.added.map(toHashMessage), duplicates: result.duplicates };
    }),
    ListBankHashes: unary(deps, 'ListBankHashes', async (request, tenantId) => {
      const page = await banks().listHashes(tenantId, bankId(request), {
        limit: request.limit ?? 0,
        startingAfter: request.startingAfter,
      });
      return { hashes: page.items.map(toHashMessage), hasMore: page.hasMore };
    }),
    GetBankHash: unary(deps, 'GetBankHash', async (request, tenantId) =>
      toHashMessage(await banks().getHash(tenantId, bankId(request), hashId(request))),
    ),
    UpdateBankHash: unary(deps, 'UpdateBankHash', async (request, tenantId) =>
      toHashMessage(
        await banks().updateHash(tenantId, bankId(request), hashId(request), {
          enabled: request.enabled,
          review: request.review,
          metadataJson: request.metadataJson,
        }),
      ),
    ),
    WithdrawBankHash: unary(deps, 'WithdrawBankHash', async (request, tenantId) => {
      await banks().withdrawHash(tenantId, bankId(request), hashId(request));
      return {};
    }),
    LookupHashes: unary(deps, 'LookupHashes', async (request, tenantId, signal) => {
      const input = request.imageUrl
        ? { imageUrl: request.imageUrl }
        : { kind: request.kind ?? '', value: request.value ?? '' };
      const result = await banks().lookup(tenantId, input, signal);
      return {
        ...(result.image
          ? {
              image: {
                position: result.image.position,
                md5: result.image.md5,
                sha256: result.image.sha256,
                pdq: result.image.pdq,
                pdqQuality: result.image.pdqQuality,
                pdqFailure: result.image.pdqFailure,
              },
            }
          : {}),
        matches: result.matches.map(toHashMatchMessage),
        cancelled: result.cancelled.map(toHashMatchMessage),
        ...(result.failure ? { failure: result.failure } : {}),
      };
    }),
  };
}

function toBankMessage(bank: BankDoc): HashBank {
  return {
    id: bank._id,
    name: bank.name,
    description: bank.description,
    kind: bank.kind,
    distance: bank.distance,
    policyId: bank.policyId,
    action: bank.action,
    negative: bank.negative,
    enabled: bank.enabled,
    ...(bank.flood ? { floodThreshold: bank.flood.threshold } : {}),
    floodWindowSeconds: bank.flood?.windowSeconds ?? 0,
    createdAt: bank.createdAt.toISOString(),
    updatedAt: bank.updatedAt.toISOString(),
  };
}

function toRetroPassMessage(pass: RetroPassDoc): RetroPass {
  return {
    id: pass._id,
    state: pass.state,
    trigger: pass.trigger,
    hashes: pass.hashIds.length,
    scanned: pass.counts.scanned,
    matched: pass.counts.matched,
    flagged: pass.counts.flagged,
    heldByHumans: pass.counts.heldByHumans,
    createdAt: pass.createdAt.toISOString(),
    startedAt: pass.startedAt?.toISOString(),
    finishedAt: pass.finishedAt?.toISOString(),
    error: pass.error,
  };
}

function toHashMessage(hash: HashDoc): BankHash {
  return {
    id: hash._id,
    bankId: hash.bankId,
    value: hash.value,
    metadataJson: JSON.stringify(hash.metadata),
    enabled: hash.enabled,
    review: hash.review,
    createdAt: hash.createdAt.toISOString(),
    updatedAt: hash.updatedAt.toISOString(),
  };
}

export function toHashMatchMessage(match: HashMatchRecord): HashMatch {
  return {
    position: match.position,
    bankId: match.bankId,
    bankName: match.bankName,
    kind: match.kind,
    distance: match.distance,
    hashId: match.hashId,
    metadataJson: JSON.stringify(match.metadata),
    action: match.action,
    policyId: match.policyId,
    cancelledBy: match.cancelledBy,
    quarantined: match.quarantined === true,
  };
}
