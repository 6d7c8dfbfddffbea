import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import ipaddr from 'ipaddr.js';
import { COLLECTIONS, ulid } from '@vigil/proto';
import { upsertRetried } from '@vigil/proto/platform';

export type MemberRole = 'moderator' | 'admin';

/** A console account of one tenant, created by operators (`npm run admin -- member create`). */
export interface MemberDoc {
  _id: string; // mem_<ulid>
  tenantId: string;
  /** Lower-cased; unique across tenants, so that sign-in needs no tenant name. */
  email: string;
  role: MemberRole;
  /** See console/password.ts. */
  passwordHash: string;
  createdAt: Date;
}

/**
 * Failed sign-ins of one member from one client address (`SignInLockDoc._id` = SHA-256 of both, so addresses are not
 * stored), and the lockout they led to. Per address, so that a stranger who knows a member's email locks out only
 * their own address, never the member.
 */
export interface SignInLockDoc {
  _id: string;
  memberId: string;
  /** Failed sign-ins since the last success or lockout. */
  failures: number;
  lockedUntil?: Date;
  /** When the document says nothing any more (swept at sign-ins): the end of the lockout, or a lockout period after the last failure. */
  expiresAt: Date;
}

/**
 * The address a lockout is kept for: an IPv4 address, or the /64 of an IPv6 one (a single client usually holds a whole
 * /64, and could otherwise try again from each of its addresses).
 */
export function lockAddress(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.process(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(':')}::/64`;
}

export interface SessionDoc {
  /** SHA-256 (hex) of the session token: the token itself lives only in the member's cookie. */
  _id: string;
  memberId: string;
  tenantId: string;
  role: MemberRole;
  /** Synchronizer token every state-changing console request must echo. */
  csrf: string;
  createdAt: Date;
  expiresAt: Date;
}

const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
const lockId = (memberId: string, ip: string): string => hashToken(`${memberId}\0${lockAddress(ip)}`);
const randomToken = (): string => randomBytes(32).toString('base64url');
const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** Console members and their server-side sessions (the gateway is their only writer). */
export class MemberStore {
  private readonly members: Collection<MemberDoc>;
  private readonly sessions: Collection<SessionDoc>;
  private readonly locks: Collection<SignInLockDoc>;

  constructor(db: Db) {
    this.members = db.collection(COLLECTIONS.consoleMembers);
    this.sessions = db.collection(COLLECTIONS.consoleSessions);
    this.locks = db.collection(COLLECTIONS.consoleSignInLocks);
  }

  async ensureIndexes(): Promise<void> {
    await this.members.createIndex({ email: 1 }, { unique: true, name: 'email_unique' });
    await this.members.createIndex({ tenantId: 1 }, { name: 'tenant' });
    await this.sessions.createIndex({ memberId: 1 }, { name: 'member' });
    // FerretDB v1 refuses TTL indexes ("expireAfterSeconds is not implemented"): expired sessions are refused on
    // read and swept through this index at each sign-in instead.
    await this.sessions.createIndex({ expiresAt: 1 }, { name: 'expires' });
    await this.locks.createIndex({ memberId: 1 }, { name: 'member' });
    await this.locks.createIndex({ expiresAt: 1 }, { name: 'expires' });
  }

  async createMember(input: { tenantId: string; email: string; role: MemberRole; passwordHash: string }) {
    const doc: MemberDoc = {
      _id: `mem_${ulid()}`,
      tenantId: input.tenantId,
      email: normalizeEmail(input.email),
      role: input.role,
      passwordHash: input.passwordHash,
      createdAt: new Date(),
    };
    await this.members.insertOne(doc);
    return doc;
  }

  listMembers(tenantId: string): Promise<MemberDoc[]> {
    return this.members
      .find({ tenantId }, { projection: { passwordHash: 0 } })
      .sort({ _id: 1 })
      .toArray();
  }

  findByEmail(email: string): Promise<MemberDoc | null> {
    return this.members.findOne({ email: normalizeEmail(email) });
  }

  /**
   * What a session acts as: the member's email and current role, null once the member was removed. Read on every
   * console request, so a removal or a role change applies to the member's next request on every replica.
   */
  async profileOf(memberId: string): Promise<{ email: string; role: MemberRole } | null> {
    const member = await this.members.findOne({ _id: memberId }, { projection: { email: 1, role: 1 } });
    return member ? { email: member.email, role: member.role } : null;
  }

  /** False when there is no such member. */
  async setRole(memberId: string, role: MemberRole): Promise<boolean> {
    return (await this.members.updateOne({ _id: memberId }, { $set: { role } })).matchedCount === 1;
  }

  /** A new password also lifts every lockout of the member. */
  async setPassword(memberId: string, passwordHash: string): Promise<boolean> {
    const result = await this.members.updateOne({ _id: memberId }, { $set: { passwordHash } });
    await this.locks.deleteMany({ memberId });
    return result.matchedCount === 1;
  }

  async removeMember(memberId: string): Promise<boolean> {
    const result = await this.members.deleteOne({ _id: memberId });
    await this.sessions.deleteMany({ memberId });
    await this.locks.deleteMany({ memberId });
    return result.deletedCount === 1;
  }

  /** Until when sign-ins of the member from `ip` are refused, if they are now. */
  async lockedUntil(memberId: string, ip: string, now = new Date()): Promise<Date | undefined> {
    const lock = await this.locks.findOne({ _id: lockId(memberId, ip) });
    return lock?.lockedUntil && lock.lockedUntil > now ? lock.lockedUntil : undefined;
  }

  /** How many client addresses the member is locked out from now (for operators). */
  async lockedAddresses(memberId: string, now = new Date()): Promise<number> {
    const locks = await this.locks.find({ memberId }).toArray();
    return locks.filter((lock) => lock.lockedUntil && lock.lockedUntil > now).length;
  }

  /**
   * Counts a failed sign-in of the member from `ip`; the `attempts`-th in a row (within a lockout period of each
   * other) locks that address out for `lockoutMs`. Read then write by `_id`: two racing failures may count once
   * (FerretDB v1 has no atomic conditional update), which only delays the lockout by an attempt.
   */
  async recordFailure(memberId: string, ip: string, attempts: number, lockoutMs: number): Promise<void> {
    const _id = lockId(memberId, ip);
    const now = Date.now();
    const current = await this.locks.findOne({ _id });
    const failures = (current && current.expiresAt.getTime() > now ? current.failures : 0) + 1;
    const expiresAt = new Date(now + lockoutMs);
    const doc: Omit<SignInLockDoc, '_id'> =
      failures >= attempts
        ? { memberId, failures: 0, lockedUntil: expiresAt, expiresAt }
        : { memberId, failures, expiresAt };
    await upsertRetried(() => this.locks.replaceOne({ _id }, doc, { upsert: true }));
    await this.locks.deleteMany({ expiresAt: { $lt: new Date(now) } });
  }

  /** A successful sign-in from `ip` clears the failures counted for that address. */
  async recordSuccess(memberId: string, ip: string): Promise<void> {
    await this.locks.deleteOne({ _id: lockId(memberId, ip) });
  }

  /** A new session; the returned token goes into the cookie and is never stored. */
  async createSession(member: MemberDoc, ttlMs: number): Promise<{ token: string; session: SessionDoc }> {
    const token = randomToken();
    const now = new Date();
    const session: SessionDoc = {
      _id: hashToken(token),
      memberId: member._id,
      tenantId: member.tenantId,
      role: member.role,
      csrf: randomToken(),
      createdAt: now,
      expiresAt: new Date(now.getTime() + ttlMs),
    };
    await this.sessions.insertOne(session);
    await this.sessions.deleteMany({ expiresAt: { $lt: now } });
    return { token, session };
  }

  /** The live session of a cookie token, by `_id`; expired ones are refused (and removed). */
  async findSession(token: string): Promise<SessionDoc | null> {
    const session = await this.sessions.findOne({ _id: hashToken(token) });
    if (!session) return null;
    if (session.expiresAt.getTime() <= Date.now()) {
      await this.sessions.deleteOne({ _id: session._id });
      return null;
    }
    return session;
  }

  async endSession(sessionId: string): Promise<void> {
    await this.sessions.deleteOne({ _id: sessionId });
  }
}
