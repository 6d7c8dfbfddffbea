import { AppealTokens, type AppealClaims } from '@vigil/proto';

export { AppealTokens, type AppealClaims };

/** The `appealUrl` of a user: a fresh link while they are suspended or banned, null otherwise or when appeals are off. */
export class AppealLinks {
  constructor(
    private readonly tokens: AppealTokens | undefined,
    private readonly publicUrl: string,
    /** Signs reporters' complaint links (`AppealTokens` with the `complaint` purpose); absent when appeals are off. */
    private readonly complaintTokens?: AppealTokens,
  ) {}

  /**
   * A reporter's link to complain about a decision not to act on their report (Art. 20 DSA), living until the
   * complaint closes; null when appeals are off or it closed.
   */
  complaintUrlFor(tenantId: string, reportId: string, openUntil: Date): string | null {
    const seconds = Math.ceil((openUntil.getTime() - Date.now()) / 1000);
    if (!this.complaintTokens || seconds <= 0) return null;
    return `${this.publicUrl}/complaint?token=${this.complaintTokens.issue(tenantId, reportId, seconds)}`;
  }

  /** `atLeastSeconds`: the link lives at least this long (a statement's appeal window). */
  urlFor(tenantId: string, user: { id: string; status?: string | null }, atLeastSeconds = 0): string | null {
    if (!this.tokens || (user.status !== 'Suspended' && user.status !== 'Banned')) return null;
    return `${this.publicUrl}/appeal?token=${this.tokens.issue(tenantId, user.id, atLeastSeconds)}`;
  }
}

/** Appeal and complaint links' signers: none without `APPEAL_TOKEN_SECRET` (the links and the page are off). */
export interface AppealTokenPair {
  appealTokens: AppealTokens | undefined;
  complaintTokens: AppealTokens | undefined;
}

export function appealTokensOf(settings: {
  appealTokenSecret: string | undefined;
  appealTokenTtlSeconds: number;
}): AppealTokenPair {
  const secret = settings.appealTokenSecret;
  if (!secret) return { appealTokens: undefined, complaintTokens: undefined };
  return {
    appealTokens: new AppealTokens(secret, settings.appealTokenTtlSeconds),
    complaintTokens: new AppealTokens(secret, settings.appealTokenTtlSeconds, Date.now, 'complaint'),
  };
}
