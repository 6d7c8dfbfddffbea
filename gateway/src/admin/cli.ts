import { MongoClient } from 'mongodb';
import { z } from 'zod';
import { TenantStore, isDuplicateKey } from '../store/tenant-store';

/**
 * Operator CLI for tenants and API keys (`npm run admin -- <command>`). Reads MONGO_URL and MONGO_DB. A new key is
 * printed once and only its hash is stored.
 */
const USAGE = `usage:
  tenant create <name>
  tenant list
  key create <tenantId|name>
  key list <tenantId|name>
  key revoke <keyId>`;

const env = z.object({ MONGO_URL: z.string().min(1), MONGO_DB: z.string().min(1).default('vigil') }).parse(process.env);

function out(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

class UsageError extends Error {}

async function run(store: TenantStore, args: string[]): Promise<void> {
  const [noun, verb, arg] = args;
  const command = `${noun ?? ''} ${verb ?? ''}`;
  switch (command) {
    case 'tenant create': {
      if (!arg) throw new UsageError('a tenant name is required');
      try {
        const tenant = await store.createTenant(arg);
        out({ id: tenant._id, name: tenant.name, createdAt: tenant.createdAt });
      } catch (err) {
        if (isDuplicateKey(err)) throw new UsageError(`a tenant named "${arg}" exists already`);
        throw err;
      }
      return;
    }
    case 'tenant list':
      out((await store.listTenants()).map((t) => ({ id: t._id, name: t.name, createdAt: t.createdAt })));
      return;
    case 'key create': {
      if (!arg) throw new UsageError('a tenant id or name is required');
      const tenant = await store.findTenant(arg);
      if (!tenant) throw new UsageError(`no tenant "${arg}"`);
      const { doc, key } = await store.createKey(tenant._id);
      out({ id: doc._id, tenantId: tenant._id, key, note: 'store this key now: it is not shown again' });
      return;
    }
    case 'key list': {
      if (!arg) throw new UsageError('a tenant id or name is required');
      const tenant = await store.findTenant(arg);
      if (!tenant) throw new UsageError(`no tenant "${arg}"`);
      out(
        (await store.listKeys(tenant._id)).map((k) => ({
          id: k._id,
          prefix: `${k.prefix}…`,
          createdAt: k.createdAt,
          revokedAt: k.revokedAt ?? null,
        })),
      );
      return;
    }
    case 'key revoke': {
      if (!arg) throw new UsageError('a key id is required');
      if (!(await store.revokeKey(arg))) throw new UsageError(`no active key "${arg}"`);
      out({ id: arg, revoked: true });
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}

async function main(): Promise<void> {
  const client = new MongoClient(env.MONGO_URL, { serverSelectionTimeoutMS: 5000 });
  try {
    await client.connect();
    const store = new TenantStore(client.db(env.MONGO_DB));
    await store.ensureIndexes();
    await run(store, process.argv.slice(2));
  } finally {
    await client.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
});
