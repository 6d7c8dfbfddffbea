import { z } from 'zod';
import { LIMITS, Policy, ReportCategory } from '@vigil/proto';
import { withDefaultPolicy } from '../domain/default-policy';
import { addPolicy } from '../use-cases/add-policy';
import { deletePolicy } from '../use-cases/delete-policy';
import { parseWith } from '../http/validate';
import { html } from './html';
import { csrfOf, param, render, tenantOf, type ConsolePages } from './page';
import { formOf } from './security';
import { dataTable, badge } from './views';

const blankToUndefined = (value: unknown) => (value === '' ? undefined : value);

/** The create form as sent: empty optional fields are absent. */
const PolicyForm = z.object({
  id: z.string(),
  name: z.string(),
  ground: z.string(),
  legalGround: z.preprocess(blankToUndefined, z.string().optional()),
  category: z.string(),
  explanation: z.string(),
  referenceUrl: z.preprocess(blankToUndefined, z.string().optional()),
});

/**
 * Policies in the console: the list (the default one included) and, for admins, a form to add one and a button to
 * delete one. They change the same settings document as `/api/v1/policies`.
 */
export function policyPages({ router, deps, change, adminOnly }: ConsolePages): void {
  router.get('/policies', async (ctx) => {
    const { policies } = await deps.configStore.getSettings(tenantOf(ctx));
    render(
      ctx,
      'Policies',
      html`<p class="muted">
          A rule or a decision names a policy; its statement of reasons gives the policy's ground, category and
          explanation.
        </p>
        ${dataTable(
          ['Id', 'Name', 'Ground', 'Category', 'Explanation', ''],
          withDefaultPolicy(policies).map(
            (policy) =>
              html`<tr data-row data-id="${policy.id}">
                <td><code>${policy.id}</code></td>
                <td>${policy.name}</td>
                <td>
                  ${badge(policy.ground === 'ILLEGAL_CONTENT' ? 'Illegal content' : 'Against the terms')}
                  ${policy.legalGround ?? ''}
                </td>
                <td><code>${policy.category}</code></td>
                <td>${policy.explanation}</td>
                <td>
                  ${
                    policies.some((stored) => stored.id === policy.id)
                      ? html`<form method="post" action="/console/policies/${policy.id}/delete">
                          ${csrfOf(ctx)}<button type="submit" class="secondary">Delete</button>
                        </form>`
                      : null
                  }
                </td>
              </tr>`,
          ),
          { className: 'policies' },
        )}
        <form method="post" action="/console/policies" class="card decision" id="new-policy">
          <h2>New policy</h2>
          ${csrfOf(ctx)}
          <label>Id <input name="id" required maxlength="64" pattern="[a-z0-9][a-z0-9_-]*" /></label>
          <label>Name <input name="name" required maxlength="${LIMITS.policyName}" /></label>
          <label
            >Ground
            <select name="ground">
              <option value="INCOMPATIBLE_CONTENT">Incompatible with the terms</option>
              <option value="ILLEGAL_CONTENT">Illegal content</option>
            </select>
          </label>
          <label>Legal ground <input name="legalGround" maxlength="${LIMITS.reportLegalGround}" /></label>
          <label
            >Category
            <select name="category">
              ${ReportCategory.options.map((category) => html`<option value="${category}">${category}</option>`)}
            </select>
          </label>
          <label
            >Explanation
            <textarea name="explanation" required maxlength="${LIMITS.policyExplanation}" rows="3"></textarea>
          </label>
          <label>Reference URL <input name="referenceUrl" type="url" maxlength="${LIMITS.url}" /></label>
          <button type="submit">Add the policy</button>
        </form>`,
      '/console/policies',
    );
  });

  router.post('/policies', adminOnly, ...change, async (ctx) => {
    const policy = parseWith(Policy, parseWith(PolicyForm, formOf(ctx), 'policy form'), 'policy form');
    await addPolicy(deps.configStore, tenantOf(ctx), policy);
    ctx.redirect('/console/policies');
  });

  router.post('/policies/:id/delete', adminOnly, ...change, async (ctx) => {
    await deletePolicy(deps.configStore, tenantOf(ctx), param(ctx, 'id'));
    ctx.redirect('/console/policies');
  });
}
