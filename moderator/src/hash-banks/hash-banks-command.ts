import { readFile } from 'node:fs/promises';
import { UsageError } from '../admin/dead-letters-command';
import type { HashBankUseCases } from './hash-bank-use-cases';

export const HASH_BANKS_USAGE = `usage:
  hash-banks list <tenantId>                              the tenant's banks
  hash-banks create <tenantId> <name> <pdq|md5|sha256> [--distance N] [--policy ID] [--action flag|flag_and_suspend]
                    [--negative] [--disabled] [--flood N [--flood-window S]]
                                                          a new bank (--flood: flood quarantine past N matches)
  hash-banks import <tenantId> <bankId> <file.csv>        add the hashes of an HMA hash file (all rows or none)
  hash-banks hashes <tenantId> <bankId> [--after hsh_…]   a page of 100 hashes
  hash-banks set <tenantId> <bankId> <hashId> enable|disable|confirm|deconfirm
  hash-banks withdraw <tenantId> <bankId> <hashId>        delete a hash (a withdrawal)
  hash-banks lookup <tenantId> <pdq|md5|sha256> <hash>    the matches of a hash, storing nothing`;

/** The operator's hash bank commands (the API's use cases, so the same checks apply); returns what the CLI prints. */
export async function hashBanksCommand(
  banks: Pick<
    HashBankUseCases,
    'listBanks' | 'createBank' | 'addHashes' | 'listHashes' | 'updateHash' | 'withdrawHash' | 'lookup'
  >,
  args: readonly string[],
): Promise<unknown> {
  const [verb, tenantId, ...rest] = args;
  if (!tenantId) throw new UsageError(HASH_BANKS_USAGE);
  switch (verb) {
    case 'list':
      return (await banks.listBanks(tenantId)).map(withoutSalt);
    case 'create': {
      const [name, kind, ...flags] = rest;
      if (!name || !kind) throw new UsageError(HASH_BANKS_USAGE);
      const options = parseFlags(
        flags,
        ['--distance', '--policy', '--action', '--flood', '--flood-window'],
        ['--negative', '--disabled'],
      );
      const distance = options['--distance'];
      if (distance !== undefined && !/^\d{1,2}$/.test(distance)) throw new UsageError('--distance is 0 to 63');
      const [flood, floodWindow] = [options['--flood'], options['--flood-window']];
      for (const value of [flood, floodWindow]) {
        if (value !== undefined && !/^\d{1,7}$/.test(value))
          throw new UsageError('--flood and --flood-window are counts');
      }
      return withoutSalt(
        await banks.createBank(tenantId, {
          name,
          kind,
          ...(distance !== undefined ? { distance: Number(distance) } : {}),
          ...(options['--policy'] ? { policyId: options['--policy'] } : {}),
          action: options['--action'] ?? 'flag',
          negative: options['--negative'] === 'true',
          enabled: options['--disabled'] !== 'true',
          ...(flood !== undefined ? { floodThreshold: Number(flood) } : {}),
          ...(floodWindow !== undefined ? { floodWindowSeconds: Number(floodWindow) } : {}),
        }),
      );
    }
    case 'import': {
      const [bankId, file] = rest;
      if (!bankId || !file || rest.length !== 2) throw new UsageError(HASH_BANKS_USAGE);
      const csv = await readFile(file, 'utf8');
      const { added, duplicates } = await banks.addHashes(tenantId, bankId, { hashes: [], csv });
      return { bankId, added: added.length, duplicates };
    }
    case 'hashes': {
      const [bankId, ...flags] = rest;
      if (!bankId) throw new UsageError(HASH_BANKS_USAGE);
      const options = parseFlags(flags, ['--after'], []);
      return banks.listHashes(tenantId, bankId, { limit: 100, startingAfter: options['--after'] });
    }
    case 'set': {
      const [bankId, hashId, change] = rest;
      const patches: Record<string, { enabled?: boolean; review?: string }> = {
        enable: { enabled: true },
        disable: { enabled: false },
        confirm: { review: 'confirmed' },
        deconfirm: { review: 'deconfirmed' },
      };
      const patch = change ? patches[change] : undefined;
      if (!bankId || !hashId || !patch || rest.length !== 3) throw new UsageError(HASH_BANKS_USAGE);
      return banks.updateHash(tenantId, bankId, hashId, patch);
    }
    case 'withdraw': {
      const [bankId, hashId] = rest;
      if (!bankId || !hashId || rest.length !== 2) throw new UsageError(HASH_BANKS_USAGE);
      await banks.withdrawHash(tenantId, bankId, hashId);
      return { hashId, withdrawn: true };
    }
    case 'lookup': {
      const [kind, value] = rest;
      if (!kind || !value || rest.length !== 2) throw new UsageError(HASH_BANKS_USAGE);
      return banks.lookup(tenantId, { kind, value });
    }
    default:
      throw new UsageError(HASH_BANKS_USAGE);
  }
}

/** A bank as printed: without the salt that keys its hash ids. */
function withoutSalt<T extends { salt?: string }>(bank: T): Omit<T, 'salt'> {
  const rest: Partial<T> = { ...bank };
  delete rest.salt;
  return rest as Omit<T, 'salt'>;
}

/** `--name value` options and `--flag` switches (as 'true'); anything else is a usage error. */
function parseFlags(
  args: readonly string[],
  valued: readonly string[],
  switches: readonly string[],
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (switches.includes(arg)) {
      out[arg] = 'true';
    } else if (valued.includes(arg) && args[i + 1] !== undefined) {
      out[arg] = args[i + 1];
      i++;
    } else {
      throw new UsageError(`unknown option "${arg}"\n${HASH_BANKS_USAGE}`);
    }
  }
  return out;
}
