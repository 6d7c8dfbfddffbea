import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { z } from 'zod';
import { jsonBody, refuseUnstorableValues } from './json-body';
import { refuseUndecodableUrl } from './url-text';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteSpec {
  method: Method;
  /** Koa-style path below the prefix, e.g. `/records/:id`. */
  path: string;
  summary: string;
  tag: string;
  /** Request body schema: the route then parses a JSON body. */
  body?: z.ZodType;
  query?: z.ZodType;
  /** Success status and the schema of its body. */
  status: number;
  response?: z.ZodType;
  /**
   * Client errors this route answers for reasons of its own, by status, each with its codes in words (the envelope's
   * `code` enum lists every code); the others are under `default`.
   */
  errors?: Record<number, string>;
  /** Other media types the success answers in (by content negotiation), each with what it holds. */
  alsoProduces?: Record<string, string>;
  /** False for the few public routes (the OpenAPI document itself). */
  authenticated?: boolean;
}

/**
 * Routes are declared once with their schemas: the same declaration drives the router, the body parser and the
 * OpenAPI document, so the document cannot drift from what is enforced.
 */
export class ApiRouter {
  /**
   * Case-sensitive and strict: `/API/V1/settings` or `/api/v1/settings/` route nowhere, so that no path reaches a
   * handler without passing the authentication in front of the router (see `isApiPath`).
   */
  readonly router = new Router({ sensitive: true, strict: true });
  readonly specs: Array<RouteSpec & { fullPath: string }> = [];

  constructor(
    private readonly prefix: string,
    private readonly bodyLimitBytes: number,
  ) {}

  route(spec: RouteSpec, handler: (ctx: Context) => Promise<void>): void {
    const fullPath = this.prefix + spec.path;
    this.specs.push({ ...spec, fullPath });
    const paramNames = [...spec.path.matchAll(/:(\w+)/g)].map((match) => match[1]!);
    const chain: Middleware[] = [
      async (ctx, next) => {
        refuseUndecodableUrl(ctx.querystring, (ctx as { captures?: string[] }).captures ?? [], paramNames);
        refuseUnstorableValues(ctx.query, ['query']);
        refuseUnstorableValues(ctx.params, ['path']);
        await next();
      },
    ];
    if (spec.body) {
      chain.push(jsonBody(this.bodyLimitBytes));
    }
    chain.push(async (ctx) => {
      await handler(ctx);
      if (ctx.body !== undefined && ctx.status === 200 && spec.status !== 200) ctx.status = spec.status;
    });
    this.router[spec.method](fullPath, ...(chain as [Middleware]));
  }

  /** A route outside the prefix (e.g. `/openapi.json`). */
  raw(spec: RouteSpec & { fullPath: string }, handler: (ctx: Context) => Promise<void>): void {
    this.specs.push(spec);
    this.router[spec.method](spec.fullPath, handler as Middleware);
  }
}
