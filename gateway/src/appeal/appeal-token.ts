import { AppealTokens, type AppealClaims, type TokenProblem } from '@vigil/proto';

export { AppealTokens, type AppealClaims, type TokenProblem };

/** The `appealUrl` of a user: a fresh link while they are suspended or banned, null otherwise or when appeals are off. */
export class AppealLinks {
  constructor(
    private readonly tokens: AppealTokens | undefined,
    private readonly publicUrl: string,
  ) {}

  /** `atLeastSeconds`: the link lives at least this long (a statement's appeal window). */
  urlFor(tenantId: string, user: { id: string; status?: string | null }, atLeastSeconds = 0): string | null {
    if (!this.tokens || (user.status !== 'Suspended' && user.status !== 'Banned')) return null;
    return `${this.publicUrl}/appeal?token=${this.tokens.issue(tenantId, user.id, atLeastSeconds)}`;
  }
}
