import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { z } from 'zod';
import { LIMITS } from '@vigil/proto';
import { requestIdOf } from '../http/request-id';
import type { MemberStore, SessionDoc } from '../store/member-store';
import type { Decider } from '../use-cases/decide';
import type { UseCaseDeps } from '../use-cases/deps';
import type { Html } from './html';
import { csrfField, layout, type Viewer } from './views';

// What every console page shares: its dependencies, the signed-in session, rendering and the form fields pages reuse.

export const CONSOLE_PREFIX = '/console';
export const PAGE_SIZE = 25;

export interface ConsoleSettings {
  sessionTtlSeconds: number;
  lockoutAttempts: number;
  lockoutSeconds: number;
  signInPerMinute: number;
  bodyLimitBytes: number;
  /** `PUBLIC_URL`: its origin is accepted as the `Origin` of state-changing requests (besides the request's own). */
  publicUrl?: string;
}

export interface ConsoleDeps extends UseCaseDeps {
  members: MemberStore;
  log: Logger;
}

/** What a page module registers its routes with; `change` guards every state-changing request. */
export interface ConsolePages {
  router: Router;
  deps: ConsoleDeps;
  settings: ConsoleSettings;
  /** Parses the urlencoded form. */
  form: Middleware;
  /** The form and the session's CSRF token (the router checks the origin of every change before). */
  change: Middleware[];
  adminOnly: Middleware;
}

interface ConsoleState {
  session?: SessionDoc & { email: string };
}

export const stateOf = (ctx: Context): ConsoleState => ctx.state;
export const viewerOf = (ctx: Context): Viewer | null => {
  const session = stateOf(ctx).session;
  return session ? { email: session.email, role: session.role, csrf: session.csrf } : null;
};
/** The session of a route behind the session check. */
export const sessionOf = (ctx: Context): SessionDoc => stateOf(ctx).session!;
export const tenantOf = (ctx: Context): string => sessionOf(ctx).tenantId;
/** How a console decision names who made it: the member's id, never their email. */
export const actorOf = (ctx: Context): string => `member:${sessionOf(ctx).memberId}`;
/** The signed-in member as a decision names them. */
export const deciderOf = (ctx: Context): Decider => ({
  tenantId: tenantOf(ctx),
  requestId: requestIdOf(ctx),
  actor: actorOf(ctx),
});
/** The metadata of a moderator call made for this request. */
export const callMeta = (ctx: Context): { requestId: string } => ({ requestId: requestIdOf(ctx) });
export const param = (ctx: Context, name: string): string => String((ctx.params as Record<string, string>)[name] ?? '');
/** The CSRF field of a form on a page behind the session check. */
export const csrfOf = (ctx: Context): Html => csrfField(viewerOf(ctx)!);

export function render(ctx: Context, title: string, body: Html, current = ''): void {
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = layout(title, viewerOf(ctx), body, current);
}

export function queryString(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) search.set(key, value);
  const text = search.toString();
  return text ? `?${text}` : '';
}

export const Reason = z.string().trim().min(1).max(LIMITS.reason);
export const optionalText = (max: number) =>
  z
    .string()
    .max(max)
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));
export const optionalDate = z
  .string()
  .max(40)
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v))
  .refine((v) => v === undefined || Number.isFinite(Date.parse(v)), 'must be a date');
export const CursorQuery = z.object({ after: optionalText(LIMITS.queryId) });
