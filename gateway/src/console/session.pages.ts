import type { Context, Next } from 'koa';
import { z } from 'zod';
import { UnauthorizedError } from '../errors';
import { requestIdOf } from '../http/request-id';
import { rateLimit } from '../http/rate-limit';
import { parseWith } from '../http/validate';
import type { ConfigVersionStore } from '../store/config-version-store';
import type { MemberStore } from '../store/member-store';
import { html } from './html';
import { CONSOLE_PREFIX, queryString, render, sessionOf, stateOf, type ConsolePages } from './page';
import { DUMMY_HASH, MAX_PASSWORD_LENGTH, verifyPassword } from './password';
import { formOf, safeNext } from './security';

const SESSION_COOKIE = 'vigil_console';

const SignInForm = z.object({
  email: z.string().trim().min(1).max(320),
  password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
  next: z.string().max(2000).optional(),
});

/**
 * The session of the cookie, if any: by the SHA-256 of its token, through `_id`. With it, the tenant's configuration
 * version, so that what the console sends (a decision, a re-run) is stamped with every change made so far, through
 * any replica (the API learns it with each key lookup instead).
 */
export function loadSession(members: MemberStore, configVersions: ConfigVersionStore) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const token = ctx.cookies.get(SESSION_COOKIE);
    if (token && token.length <= 100) {
      const session = await members.findSession(token);
      if (session) {
        // The member as it is now, not as it was at sign-in: removed, it has no session; its role is the current one.
        const [profile] = await Promise.all([
          members.profileOf(session.memberId),
          configVersions.confirm(session.tenantId),
        ]);
        if (profile !== null) stateOf(ctx).session = { ...session, email: profile.email, role: profile.role };
      }
    }
    await next();
  };
}

/** Everything registered after this needs a session: a page sends the browser to sign in, a change is refused. */
export async function requireSession(ctx: Context, next: Next): Promise<void> {
  if (!stateOf(ctx).session) {
    if (ctx.method === 'GET' || ctx.method === 'HEAD') {
      ctx.redirect(`/console/sign-in${queryString({ next: ctx.originalUrl })}`);
      return;
    }
    throw new UnauthorizedError('sign in first');
  }
  await next();
}

/** The sign-in form; after a refusal, with its message and the email given (never the password). */
function signInPage(ctx: Context, next: string, message?: string, email = ''): void {
  render(
    ctx,
    'Sign in',
    html`<form method="post" action="/console/sign-in" class="card sign-in">
      ${message ? html`<p class="error" role="alert">${message}</p>` : null}
      <input type="hidden" name="next" value="${next}" />
      <label
        >Email
        <input type="email" name="email" value="${email}" autocomplete="username" required maxlength="320" autofocus
      /></label>
      <label
        >Password
        <input
          type="password"
          name="password"
          autocomplete="current-password"
          required
          maxlength="${MAX_PASSWORD_LENGTH}"
      /></label>
      <button type="submit">Sign in</button>
    </form>`,
  );
}

export function signInRoutes({ router, deps, settings, form }: ConsolePages): void {
  const signInLimit = rateLimit(deps.rateLimiter, {
    points: settings.signInPerMinute,
    windowSeconds: 60,
    keyOf: (ctx) => `console-sign-in:${ctx.ip}`,
    message: 'too many sign-in attempts from this address',
  });

  router.get('/sign-in', (ctx) => {
    if (stateOf(ctx).session) {
      ctx.redirect(safeNext(ctx.query.next, CONSOLE_PREFIX, '/console/records'));
      return;
    }
    signInPage(ctx, safeNext(ctx.query.next, CONSOLE_PREFIX, '/console/records'));
  });

  // No session exists yet to tie a token to: the same-origin check and the SameSite=Strict cookie stop forged
  // sign-ins. Unknown emails cost a hash too, and every failure answers the same, so emails cannot be probed.
  router.post('/sign-in', signInLimit, form, async (ctx) => {
    const input = parseWith(SignInForm, formOf(ctx), 'sign-in form');
    const next = safeNext(input.next, CONSOLE_PREFIX, '/console/records');
    const member = await deps.members.findByEmail(input.email);
    // Locked out per member and client address: a stranger who knows the email locks out only their own address.
    const locked = member ? (await deps.members.lockedUntil(member._id, ctx.ip)) !== undefined : false;
    const ok = await verifyPassword(input.password, member && !locked ? member.passwordHash : DUMMY_HASH);
    if (!member || locked || !ok) {
      if (member && !locked) {
        await deps.members.recordFailure(member._id, ctx.ip, settings.lockoutAttempts, settings.lockoutSeconds * 1000);
      }
      deps.log.info({ memberId: member?._id, locked, requestId: requestIdOf(ctx) }, 'console sign-in refused');
      ctx.status = 401;
      signInPage(ctx, next, 'Wrong email or password, or too many failed attempts: try again later.', input.email);
      return;
    }
    await deps.members.recordSuccess(member._id, ctx.ip);
    if (stateOf(ctx).session) await deps.members.endSession(stateOf(ctx).session!._id);
    const { token, session } = await deps.members.createSession(member, settings.sessionTtlSeconds * 1000);
    ctx.cookies.set(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'strict',
      secure: ctx.secure,
      path: CONSOLE_PREFIX,
      expires: session.expiresAt,
      overwrite: true,
    });
    deps.log.info({ memberId: member._id, requestId: requestIdOf(ctx) }, 'console sign-in');
    ctx.redirect(next);
  });
}

export function signOutRoutes({ router, deps, change }: ConsolePages): void {
  router.post('/sign-out', ...change, async (ctx) => {
    await deps.members.endSession(sessionOf(ctx)._id);
    ctx.cookies.set(SESSION_COOKIE, '', { path: CONSOLE_PREFIX, httpOnly: true, sameSite: 'strict', maxAge: 0 });
    ctx.redirect('/console/sign-in');
  });
}
