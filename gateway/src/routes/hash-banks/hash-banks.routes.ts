import type { Context } from 'koa';
import { HASH_BANK_LIMITS } from '@vigil/proto';
import { NotFoundError } from '../../errors';
import type { ApiRouter } from '../../http/api-router';
import { requestIdOf } from '../../http/request-id';
import { body, query } from '../../http/validate';
import { addBankHashes } from '../../use-cases/hash-banks/add-bank-hashes';
import { createHashBank } from '../../use-cases/hash-banks/create-hash-bank';
import { deleteHashBank } from '../../use-cases/hash-banks/delete-hash-bank';
import { dismissHashQuarantine } from '../../use-cases/hash-banks/dismiss-hash-quarantine';
import { getHashBank } from '../../use-cases/hash-banks/get-hash-bank';
import { importBankHashes } from '../../use-cases/hash-banks/import-bank-hashes';
import { listBankHashes } from '../../use-cases/hash-banks/list-bank-hashes';
import { listHashBanks } from '../../use-cases/hash-banks/list-hash-banks';
import { listHashQuarantines } from '../../use-cases/hash-banks/list-hash-quarantines';
import { lookupHashes } from '../../use-cases/hash-banks/lookup-hashes';
import { releaseHashQuarantine } from '../../use-cases/hash-banks/release-hash-quarantine';
import { updateBankHash } from '../../use-cases/hash-banks/update-bank-hash';
import { updateHashBank } from '../../use-cases/hash-banks/update-hash-bank';
import type { BankCaller } from '../../use-cases/hash-banks/views';
import { withdrawBankHash } from '../../use-cases/hash-banks/withdraw-bank-hash';
import { principalOf, type RouteDeps } from '../deps';
import {
  AddHashesBody,
  BankHashData,
  BankHashList,
  CreateHashBankBody,
  HashBankData,
  HashBankDetailData,
  HashBankDeleted,
  HashBankList,
  HashQuarantineList,
  HashesAdded,
  HashWithdrawn,
  ImportHashesBody,
  ListHashesQuery,
  LookupBody,
  LookupResult,
  QuarantineDismissed,
  QuarantineReleased,
  UpdateHashBankBody,
  UpdateHashBody,
} from './hash-banks.schema';

/** A path parameter that names a bank (`bnk_…`) or a hash (`hsh_…`), or nothing (404). */
function param(ctx: Context, name: 'id' | 'hashId', pattern: RegExp): string {
  const value = String((ctx.params as Record<string, string>)[name] ?? '');
  if (!pattern.test(value)) throw new NotFoundError(name === 'id' ? 'hash bank not found' : 'hash not found');
  return value;
}
const bankParam = (ctx: Context) => param(ctx, 'id', /^bnk_[0-9A-Z]{26}$/);
const hashParam = (ctx: Context) => param(ctx, 'hashId', /^hsh_[A-Za-z0-9_-]{22}$/);

/** Hash banks (docs/hash-banks.md): thin routes over the use cases, which call the moderator that owns the banks. */
export function hashBankRoutes(api: ApiRouter, deps: RouteDeps): void {
  const caller = (ctx: Context): BankCaller => ({
    moderator: deps.moderator,
    tenantId: principalOf(ctx).tenantId,
    requestId: requestIdOf(ctx),
  });
  const tag = 'hash-banks';

  api.route(
    {
      method: 'get',
      path: '/hash-banks',
      tag,
      summary: "The tenant's hash banks.",
      status: 200,
      response: HashBankList,
    },
    async (ctx) => {
      ctx.body = { data: await listHashBanks(caller(ctx)) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/hash-banks',
      tag,
      summary: `Create a hash bank (at most ${HASH_BANK_LIMITS.banks}): pdq, md5 or sha256, with its distance, policy and action.`,
      body: CreateHashBankBody,
      status: 201,
      response: HashBankData,
      errors: { 409: '`conflict`: the tenant has the most banks it may have.' },
    },
    async (ctx) => {
      const bank = await createHashBank(caller(ctx), body(ctx, CreateHashBankBody));
      ctx.status = 201;
      ctx.body = { data: bank };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/hash-banks/:id',
      tag,
      summary: 'Get a hash bank, with its newest retroactive pass.',
      status: 200,
      response: HashBankDetailData,
    },
    async (ctx) => {
      ctx.body = { data: await getHashBank(caller(ctx), bankParam(ctx)) };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/hash-banks/:id',
      tag,
      summary: 'Change a hash bank; every moderator matches with the change from the next image on.',
      body: UpdateHashBankBody,
      status: 200,
      response: HashBankData,
    },
    async (ctx) => {
      const patch = body(ctx, UpdateHashBankBody);
      ctx.body = { data: await updateHashBank(caller(ctx), bankParam(ctx), patch) };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/hash-banks/:id',
      tag,
      summary: 'Delete a hash bank and every hash it holds.',
      status: 200,
      response: HashBankDeleted,
    },
    async (ctx) => {
      const id = bankParam(ctx);
      await deleteHashBank(caller(ctx), id);
      ctx.body = { id, deleted: true };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/hash-banks/:id/hashes',
      tag,
      summary: "A page of the bank's hashes, by id.",
      query: ListHashesQuery,
      status: 200,
      response: BankHashList,
    },
    async (ctx) => {
      const q = query(ctx, ListHashesQuery);
      const page = await listBankHashes(caller(ctx), bankParam(ctx), {
        limit: q.limit,
        startingAfter: q.starting_after,
      });
      ctx.body = { data: page.hashes, has_more: page.hasMore };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/hash-banks/:id/hashes',
      tag,
      summary: `Add hashes (at most ${HASH_BANK_LIMITS.importRows}), each with its metadata; a hash the bank holds is left as it is.`,
      body: AddHashesBody,
      status: 201,
      response: HashesAdded,
    },
    async (ctx) => {
      const input = body(ctx, AddHashesBody);
      const result = await addBankHashes(caller(ctx), bankParam(ctx), input);
      ctx.status = 201;
      ctx.body = { data: result.added, duplicates: result.duplicates };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/hash-banks/:id/hashes/import',
      tag,
      summary: `Import a hash file in HMA's CSV format (at most ${HASH_BANK_LIMITS.importRows} rows); a bad row fails it, named by its line.`,
      body: ImportHashesBody,
      status: 201,
      response: HashesAdded,
    },
    async (ctx) => {
      const input = body(ctx, ImportHashesBody);
      const result = await importBankHashes(caller(ctx), bankParam(ctx), input);
      ctx.status = 201;
      ctx.body = { data: result.added, duplicates: result.duplicates };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/hash-banks/:id/hashes/:hashId',
      tag,
      summary:
        'Enable or disable a hash, confirm or deconfirm it (a deconfirmed hash no longer matches), or set its metadata.',
      body: UpdateHashBody,
      status: 200,
      response: BankHashData,
    },
    async (ctx) => {
      const patch = body(ctx, UpdateHashBody);
      ctx.body = { data: await updateBankHash(caller(ctx), bankParam(ctx), hashParam(ctx), patch) };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/hash-banks/:id/hashes/:hashId',
      tag,
      summary: 'Withdraw a hash: deleted from the store at once, and from every moderator before its next match.',
      status: 200,
      response: HashWithdrawn,
    },
    async (ctx) => {
      const id = hashParam(ctx);
      await withdrawBankHash(caller(ctx), bankParam(ctx), id);
      ctx.body = { id, withdrawn: true };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/hashes/lookup',
      tag,
      summary:
        "Match a hash, or an image URL (fetched and hashed), against the tenant's enabled banks; stores nothing.",
      body: LookupBody,
      status: 200,
      response: LookupResult,
    },
    async (ctx) => {
      ctx.body = await lookupHashes(caller(ctx), body(ctx, LookupBody));
    },
  );

  api.route(
    {
      method: 'get',
      path: '/hash-quarantines',
      tag,
      summary: 'The hashes in flood quarantine: each stopped acting when it matched past its bank threshold.',
      status: 200,
      response: HashQuarantineList,
    },
    async (ctx) => {
      ctx.body = { data: await listHashQuarantines(caller(ctx)) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/hash-quarantines/:hashId/release',
      tag,
      summary:
        "Release a quarantined hash: it acts again and its held matches are applied, never over a person's decision.",
      status: 200,
      response: QuarantineReleased,
    },
    async (ctx) => {
      const hashId = hashParam(ctx);
      ctx.body = { hashId, released: true, ...(await releaseHashQuarantine(caller(ctx), hashId)) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/hash-quarantines/:hashId/dismiss',
      tag,
      summary: 'Dismiss a quarantined hash (a false positive): its held matches are dropped and the hash is disabled.',
      status: 200,
      response: QuarantineDismissed,
    },
    async (ctx) => {
      const hashId = hashParam(ctx);
      ctx.body = { hashId, dismissed: true, ...(await dismissHashQuarantine(caller(ctx), hashId)) };
    },
  );
}
