import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { ulid } from 'ulid';
import { COLLECTIONS } from '@vigil/proto';

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
  /** Failed sign-ins since the last success or lockout. */
  failedSignIns: number;
  lockedUntil?: Date;
  createdAt: Date;
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

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
const randomToken = (): string => randomBytes(32).toString('base64url');
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** Console members and their server-side sessions (the gateway is their only writer). */
export class MemberStore {
  private readonly members: Collection<MemberDoc>;
  private readonly sessions: Collection<SessionDoc>;

  constructor(db: Db) {
    this.members = db.collection(COLLECTIONS.consoleMembers);
    this.sessions = db.collection(COLLECTIONS.consoleSessions);
  }

  async ensureIndexes(): Promise<void> {
    await this.members.createIndex({ email: 1 }, { unique: true, name: 'email_unique' });
    await this.members.createIndex({ tenantId: 1 }, { name: 'tenant' });
    await this.sessions.createIndex({ memberId: 1 }, { name: 'member' });
    // FerretDB v1 refuses TTL indexes ("expireAfterSeconds is not implemented"): expired sessions are refused on
    // read and swept through this index at each sign-in instead.
    await this.sessions.createIndex({ expiresAt: 1 }, { name: 'expires' });
  }

  async createMember(input: { tenantId: string; email: string; role: MemberRole; passwordHash: string }) {
    const doc: MemberDoc = {
      _id: `mem_${ulid()}`,
      tenantId: input.tenantId,
      email: normalizeEmail(input.email),
      role: input.role,
      passwordHash: input.passwordHash,
      failedSignIns: 0,
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

  async emailOf(memberId: string): Promise<string | null> {
    const member = await this.members.findOne({ _id: memberId }, { projection: { email: 1 } });
    return member ? member.email : null;
  }

  async setPassword(memberId: string, passwordHash: string): Promise<boolean> {
    const result = await this.members.updateOne(
      { _id: memberId },
      { $set: { passwordHash, failedSignIns: 0 }, $unset: { lockedUntil: '' } },
    );
    return result.matchedCount === 1;
  }

  async removeMember(memberId: string): Promise<boolean> {
    const result = await this.members.deleteOne({ _id: memberId });
    await this.sessions.deleteMany({ memberId });
    return result.deletedCount === 1;
  }

  /**
   * Counts a failed sign-in; the `attempts`-th in a row locks the member out until `lockedUntil`. Read then write by
   * `_id`: two racing failures may count once (FerretDB v1 has no atomic conditional update), which only delays the
   * lockout by an attempt.
   */
  async recordFailure(member: MemberDoc, attempts: number, lockoutMs: number): Promise<void> {
    const failures = member.failedSignIns + 1;
    if (failures >= attempts) {
      await this.members.updateOne(
        { _id: member._id },
        { $set: { failedSignIns: 0, lockedUntil: new Date(Date.now() + lockoutMs) } },
      );
    } else {
      await this.members.updateOne({ _id: member._id }, { $set: { failedSignIns: failures } });
    }
  }

  async recordSuccess(member: MemberDoc): Promise<void> {
    if (member.failedSignIns === 0 && !member.lockedUntil) return;
    await this.members.updateOne({ _id: member._id }, { $set: { failedSignIns: 0 }, $unset: { lockedUntil: '' } });
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
