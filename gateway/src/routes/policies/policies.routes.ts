import { LIMITS, Policy, type Policy as PolicyType } from '@vigil/proto';
import { withDefaultPolicy } from '../../domain/default-policy';
import type { Context } from 'koa';
import { LimitExceededError, NotFoundError, ValidationError } from '../../errors';
import type { ApiRouter } from '../../http/api-router';
import { body } from '../../http/validate';
import { addPolicy } from '../../use-cases/add-policy';
import { deletePolicy } from '../../use-cases/delete-policy';
import { principalOf, type RouteDeps } from '../deps';
import { CreatePolicyBody, PolicyData, PolicyDeleted, PolicyList, PolicyPatchBody } from './policies.schema';

/** The `:id` path parameter: a policy id, or nothing this tenant has (404). */
function policyParam(ctx: Context): string {
  const id = String((ctx.params as Record<string, string>).id ?? '');
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(id)) throw new NotFoundError('policy not found');
  return id;
}

/**
 * Policies: CRUD over the list in the tenant's settings (so every moderator sees a change with the next configuration
 * version, like any setting). The built-in `default` policy is listed until the tenant writes its own `default`.
 */
export function policyRoutes(api: ApiRouter, deps: RouteDeps): void {
  const store = deps.configStore;

  api.route(
    {
      method: 'get',
      path: '/policies',
      tag: 'policies',
      summary: "The tenant's policies, the default one included.",
      status: 200,
      response: PolicyList,
    },
    async (ctx) => {
      const { policies } = await store.getSettings(principalOf(ctx).tenantId);
      ctx.body = { data: withDefaultPolicy(policies) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/policies',
      tag: 'policies',
      summary: `Create a policy (at most ${LIMITS.policies}); id \`default\` replaces the built-in default policy.`,
      body: CreatePolicyBody,
      status: 201,
      response: PolicyData,
    },
    async (ctx) => {
      const policy = body(ctx, CreatePolicyBody);
      await addPolicy(store, principalOf(ctx).tenantId, policy);
      ctx.status = 201;
      ctx.body = { data: policy };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/policies/:id',
      tag: 'policies',
      summary: 'Get a policy.',
      status: 200,
      response: PolicyData,
    },
    async (ctx) => {
      const id = policyParam(ctx);
      const { policies } = await store.getSettings(principalOf(ctx).tenantId);
      const policy = withDefaultPolicy(policies).find((candidate) => candidate.id === id);
      if (!policy) throw new NotFoundError('policy not found');
      ctx.body = { data: policy };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/policies/:id',
      tag: 'policies',
      summary:
        'Change a policy. Decisions already made keep the grounds they were made on; later ones use the new text.',
      body: PolicyPatchBody,
      status: 200,
      response: PolicyData,
    },
    async (ctx) => {
      const id = policyParam(ctx);
      const patch = body(ctx, PolicyPatchBody);
      let changed: PolicyType | undefined;
      await store.changePolicies(principalOf(ctx).tenantId, (current) => {
        const list = withDefaultPolicy(current);
        const stored = list.find((candidate) => candidate.id === id);
        if (!stored) throw new NotFoundError('policy not found');
        const { legalGround, ...rest } = patch;
        const next: Record<string, unknown> = { ...stored, ...stripUndefined(rest) };
        if (legalGround === null) delete next.legalGround;
        else if (legalGround !== undefined) next.legalGround = legalGround;
        const parsed = Policy.safeParse(next);
        if (!parsed.success) {
          throw new ValidationError(
            'the policy would be invalid',
            parsed.error.issues.map((issue) => ({ path: issue.path.map(String), message: issue.message })),
          );
        }
        changed = parsed.data;
        // Editing the built-in default stores it as the tenant's own.
        const others = current.filter((candidate) => candidate.id !== id);
        if (others.length >= LIMITS.policies) {
          throw new LimitExceededError(`at most ${LIMITS.policies} policies`, { limit: LIMITS.policies });
        }
        return [...others, changed];
      });
      ctx.body = { data: changed };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/policies/:id',
      tag: 'policies',
      summary:
        'Delete a policy (409 while a rule of the live rule set names it). Deleting `default` restores the built-in ' +
        'one.',
      status: 200,
      response: PolicyDeleted,
    },
    async (ctx) => {
      const id = policyParam(ctx);
      await deletePolicy(store, principalOf(ctx).tenantId, id);
      ctx.body = { id, deleted: true };
    },
  );
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
