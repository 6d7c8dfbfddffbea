import { MongoClient } from 'mongodb';
import { isDuplicateKeyError } from '@vigil/proto/platform';
import { z } from 'zod';
import { loadConfigOf } from '../config';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, generatePassword, hashPassword } from '../console/password';
import { MemberStore } from '../store/member-store';
import { TenantRateLimit, TenantStore } from '../store/tenant-store';

/**
 * Operator CLI for tenants, API keys and console members (`npm run admin -- <command>`). Reads MONGO_URL and
 * MONGO_DB. A new key or generated password is printed once and only its hash is stored.
 */
const USAGE = `usage:
  tenant create <name>
  tenant list
  tenant rate-limit <tenantId|name> <requests> <windowSeconds>   (0 requests: no limit)
  tenant rate-limit <tenantId|name> default
  key create <tenantId|name>
  key list <tenantId|name>
  key revoke <keyId>
  member create <tenantId|name> <email> [--role moderator|admin] [--password-stdin]
  member list <tenantId|name>
  member role <memberId> moderator|admin
  member remove <memberId>`;

const env = loadConfigOf(['MONGO_URL', 'MONGO_DB', 'API_KEY_CACHE_TTL_MS']);

/**
 * Waits out the gateways' key cache (API_KEY_CACHE_TTL_MS) after a change it bounds: once the command returns, every
 * gateway acts on the change. The deployment's gateways must share this value.
 */
const settled = () => new Promise<void>((resolve) => setTimeout(resolve, env.API_KEY_CACHE_TTL_MS));

function out(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

class UsageError extends Error {}

const EMAIL = z.email().max(320);
const COUNT = z
  .string()
  .regex(/^\d{1,10}$/)
  .transform(Number);

/** `<requests> <windowSeconds>`, or `default` to drop the tenant's own limit. */
function rateLimitOf(args: string[]) {
  if (args.length === 1 && args[0] === 'default') return null;
  const [requests, windowSeconds] = args;
  const parsed = z
    .object({ requests: COUNT, windowSeconds: COUNT })
    .pipe(TenantRateLimit)
    .safeParse({ requests, windowSeconds });
  if (args.length !== 2 || !parsed.success) {
    throw new UsageError('give <requests> (0–1000000000, 0: no limit) <windowSeconds> (1–86400), or default');
  }
  return parsed.data;
}

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text.replace(/\r?\n$/, '');
}

/** `--name value` out of the arguments; the rest stay positional. */
function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  if (index === -1) return undefined;
  const value = args[index + 1];
  args.splice(index, 2);
  return value;
}

async function member(store: TenantStore, members: MemberStore, verb: string | undefined, args: string[]) {
  const passwordFromStdin = args.includes('--password-stdin');
  if (passwordFromStdin) args.splice(args.indexOf('--password-stdin'), 1);
  const role = option(args, '--role') ?? 'moderator';
  const [arg, email] = args;
  switch (verb) {
    case 'create': {
      if (!arg || !email) throw new UsageError('a tenant id or name and an email are required');
      if (role !== 'moderator' && role !== 'admin') throw new UsageError('--role is moderator or admin');
      if (!EMAIL.safeParse(email).success) throw new UsageError('the email is not valid');
      const tenant = await store.findTenant(arg);
      if (!tenant) throw new UsageError(`no tenant "${arg}"`);
      const password = passwordFromStdin ? await readStdin() : generatePassword();
      if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
        throw new UsageError(`the password must be ${MIN_PASSWORD_LENGTH}–${MAX_PASSWORD_LENGTH} characters`);
      }
      try {
        const doc = await members.createMember({
          tenantId: tenant._id,
          email,
          role: role,
          passwordHash: await hashPassword(password),
        });
        out({
          id: doc._id,
          tenantId: tenant._id,
          email: doc.email,
          role: doc.role,
          ...(passwordFromStdin ? {} : { password, note: 'store this password now: it is not shown again' }),
        });
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new UsageError('a member with this email exists already');
        throw err;
      }
      return;
    }
    case 'list': {
      if (!arg) throw new UsageError('a tenant id or name is required');
      const tenant = await store.findTenant(arg);
      if (!tenant) throw new UsageError(`no tenant "${arg}"`);
      const list = await members.listMembers(tenant._id);
      out(
        await Promise.all(
          list.map(async (m) => ({
            id: m._id,
            email: m.email,
            role: m.role,
            createdAt: m.createdAt,
            lockedAddresses: await members.lockedAddresses(m._id),
          })),
        ),
      );
      return;
    }
    case 'role': {
      if (!arg || (email !== 'moderator' && email !== 'admin')) {
        throw new UsageError('a member id and a role (moderator or admin) are required');
      }
      if (!(await members.setRole(arg, email))) throw new UsageError(`no member "${arg}"`);
      out({ id: arg, role: email });
      return;
    }
    case 'remove': {
      if (!arg) throw new UsageError('a member id is required');
      if (!(await members.removeMember(arg))) throw new UsageError(`no member "${arg}"`);
      out({ id: arg, removed: true });
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}

async function run(store: TenantStore, members: MemberStore, args: string[]): Promise<void> {
  const [noun, verb, arg] = args;
  if (noun === 'member') return member(store, members, verb, args.slice(2));
  const command = `${noun ?? ''} ${verb ?? ''}`;
  switch (command) {
    case 'tenant create': {
      if (!arg) throw new UsageError('a tenant name is required');
      try {
        const tenant = await store.createTenant(arg);
        out({ id: tenant._id, name: tenant.name, createdAt: tenant.createdAt });
      } catch (err) {
        if (isDuplicateKeyError(err)) throw new UsageError(`a tenant named "${arg}" exists already`);
        throw err;
      }
      return;
    }
    case 'tenant list':
      out(
        (await store.listTenants()).map((t) => ({
          id: t._id,
          name: t.name,
          createdAt: t.createdAt,
          rateLimit: t.rateLimit ?? null,
        })),
      );
      return;
    case 'tenant rate-limit': {
      if (!arg) throw new UsageError('a tenant id or name is required');
      const limit = rateLimitOf(args.slice(3));
      const tenant = await store.findTenant(arg);
      if (!tenant || !(await store.setRateLimit(tenant._id, limit))) throw new UsageError(`no tenant "${arg}"`);
      await settled();
      out({
        id: tenant._id,
        name: tenant.name,
        rateLimit: limit,
        note: 'every gateway applies it now; null: the default RATE_LIMIT_POINTS per RATE_LIMIT_WINDOW_S',
      });
      return;
    }
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
      await settled();
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
    const members = new MemberStore(client.db(env.MONGO_DB));
    await store.ensureIndexes();
    await members.ensureIndexes();
    await run(store, members, process.argv.slice(2));
  } finally {
    await client.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
});
