import type { Context } from 'koa';
import { z } from 'zod';
import { BankAction, DEFAULT_FLOOD_WINDOW_SECONDS, HASH_BANK_LIMITS, HashKind } from '@vigil/proto';
import { withDefaultPolicy } from '../domain/default-policy';
import { NotFoundError } from '../errors';
import { requestIdOf } from '../http/request-id';
import { parseWith } from '../http/validate';
import {
  AddHashesBody,
  CreateHashBankBody,
  ImportHashesBody,
  UpdateHashBankBody,
  type RetroPassView,
} from '../routes/hash-banks/hash-banks.schema';
import { addBankHashes } from '../use-cases/hash-banks/add-bank-hashes';
import { createHashBank } from '../use-cases/hash-banks/create-hash-bank';
import { getHashBank } from '../use-cases/hash-banks/get-hash-bank';
import { importBankHashes } from '../use-cases/hash-banks/import-bank-hashes';
import { listBankHashes } from '../use-cases/hash-banks/list-bank-hashes';
import { listHashBanks } from '../use-cases/hash-banks/list-hash-banks';
import { listHashFeeds } from '../use-cases/hash-banks/list-hash-feeds';
import { updateBankHash } from '../use-cases/hash-banks/update-bank-hash';
import { updateHashBank } from '../use-cases/hash-banks/update-hash-bank';
import type { BankCaller } from '../use-cases/hash-banks/views';
import { withdrawBankHash } from '../use-cases/hash-banks/withdraw-bank-hash';
import { html } from './html';
import { csrfOf, CursorQuery, PAGE_SIZE, render, tenantOf, type ConsolePages } from './page';
import { formOf } from './security';
import { badge, when } from './views';

const BANK_ID = /^bnk_[0-9A-Z]{26}$/;
const HASH_ID = /^hsh_[A-Za-z0-9_-]{22}$/;

/** An id from the path, checked as the API's routes check it: anything else is not found. */
function idParam(ctx: Context, name: 'id' | 'hashId'): string {
  const value = String((ctx.params as Record<string, string>)[name] ?? '');
  const pattern = name === 'id' ? BANK_ID : HASH_ID;
  if (!pattern.test(value)) throw new NotFoundError(name === 'id' ? 'hash bank not found' : 'hash not found');
  return value;
}

const blankToUndefined = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);

/** The create form as sent: blank optional fields are absent, the distance a number, the checkbox a boolean. */
const BankForm = z.object({
  name: z.string(),
  description: z.preprocess(blankToUndefined, z.string().optional()),
  kind: z.string(),
  distance: z.preprocess(blankToUndefined, z.coerce.number().optional()),
  policy: z.preprocess(blankToUndefined, z.string().optional()),
  action: z.string(),
  negative: z.preprocess((value) => value === 'on', z.boolean()),
});

/** The flood quarantine form as sent: a blank threshold turns it off; a blank window keeps the bank's. */
const FloodForm = z.object({
  threshold: z.preprocess(blankToUndefined, z.coerce.number().optional()),
  windowSeconds: z.preprocess(blankToUndefined, z.coerce.number().optional()),
});

/** One hash and its metadata, one `key=value` a line. */
const HashForm = z.object({ hash: z.string().trim(), metadata: z.string().optional() });

/** A hash file pasted (or read into the text area by the console's script from a chosen file). */
const ImportForm = z.object({ csv: z.string() });

/** The outcome of an import, carried to the bank's page in its query. */
const BankPageQuery = CursorQuery.extend({
  added: z.preprocess(blankToUndefined, z.coerce.number().int().min(0).max(HASH_BANK_LIMITS.importRows).optional()),
  duplicates: z.preprocess(
    blankToUndefined,
    z.coerce.number().int().min(0).max(HASH_BANK_LIMITS.importRows).optional(),
  ),
});

/** What a hash's buttons ask: enable or disable it, or set its review. */
const HashChange = z.object({ change: z.enum(['enable', 'disable', 'confirmed', 'deconfirmed', 'unreviewed']) });

function metadataOf(text: string | undefined): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const line of (text ?? '').split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const at = line.indexOf('=');
    const key = (at < 0 ? line : line.slice(0, at)).trim();
    metadata[key] = at < 0 ? '' : line.slice(at + 1).trim();
  }
  return metadata;
}

/**
 * Hash banks in the console (docs/hash-banks.md): the tenant's banks and a form to create one; a bank's hashes, paged,
 * with a form to add one and buttons to disable, confirm, deconfirm or withdraw each. Members see them; admins change
 * them. They call the same use cases as `/api/v1/hash-banks`.
 */
export function hashBankPages({ router, deps, change, adminOnly }: ConsolePages): void {
  const caller = (ctx: Context): BankCaller => ({
    moderator: deps.moderator,
    tenantId: tenantOf(ctx),
    requestId: requestIdOf(ctx),
  });

  router.get('/hash-banks', async (ctx) => {
    const [banks, settings] = await Promise.all([
      listHashBanks(caller(ctx)),
      deps.configStore.getSettings(tenantOf(ctx)),
    ]);
    render(
      ctx,
      'Hash banks',
      html`<p class="muted">
          Every image fetched for a record is hashed and matched against the enabled banks before the classifier. A
          match flags the record; a <code>flag_and_suspend</code> bank suspends its user as well.
        </p>
        <table class="hash-banks">
          <thead>
            <tr>
              <th>Name</th>
              <th>Kind</th>
              <th>Distance</th>
              <th>Policy</th>
              <th>Action</th>
              <th>State</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            ${banks.map(
              (bank) =>
                html`<tr data-row data-id="${bank.id}">
                  <td><a href="/console/hash-banks/${bank.id}">${bank.name}</a></td>
                  <td><code>${bank.kind}</code>${bank.negative ? html` ${badge('negative')}` : null}</td>
                  <td>${bank.kind === 'pdq' ? String(bank.distance) : '–'}</td>
                  <td>${bank.policy ? html`<code>${bank.policy}</code>` : 'default'}</td>
                  <td><code>${bank.action}</code></td>
                  <td>${bank.enabled ? badge('enabled') : badge('disabled')}</td>
                  <td>${when(bank.createdAt)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        <form method="post" action="/console/hash-banks" class="card decision" id="new-bank">
          <h2>New bank</h2>
          ${csrfOf(ctx)}
          <label>Name <input name="name" required maxlength="${HASH_BANK_LIMITS.bankName}" /></label>
          <label>Description <input name="description" maxlength="${HASH_BANK_LIMITS.bankDescription}" /></label>
          <label
            >Kind
            <select name="kind">
              ${HashKind.options.map((kind) => html`<option value="${kind}">${kind}</option>`)}
            </select>
          </label>
          <label>PDQ distance <input name="distance" type="number" min="0" max="63" placeholder="31" /></label>
          <label
            >Policy
            <select name="policy">
              <option value="">(the default policy)</option>
              ${withDefaultPolicy(settings.policies)
                .filter((policy) => policy.id !== 'default')
                .map((policy) => html`<option value="${policy.id}">${policy.name}</option>`)}
            </select>
          </label>
          <label
            >Action
            <select name="action">
              ${BankAction.options.map((action) => html`<option value="${action}">${action}</option>`)}
            </select>
          </label>
          <label><input type="checkbox" name="negative" /> Negative bank (an allowlist)</label>
          <button type="submit">Create the bank</button>
        </form>`,
      '/console/hash-banks',
    );
  });

  router.post('/hash-banks', adminOnly, ...change, async (ctx) => {
    const form = parseWith(BankForm, formOf(ctx), 'bank form');
    const bank = await createHashBank(caller(ctx), parseWith(CreateHashBankBody, form, 'bank form'));
    ctx.redirect(`/console/hash-banks/${bank.id}`);
  });

  router.get('/hash-banks/:id', async (ctx) => {
    const bankId = idParam(ctx, 'id');
    const q = parseWith(BankPageQuery, ctx.query, 'query parameters');
    const bank = await getHashBank(caller(ctx), bankId);
    const [page, feeds] = await Promise.all([
      listBankHashes(caller(ctx), bankId, { limit: PAGE_SIZE, startingAfter: q.after }),
      listHashFeeds(caller(ctx), bankId),
    ]);
    const last = page.hashes.at(-1);
    const button = (hashId: string, value: string, label: string) =>
      html`<form method="post" action="/console/hash-banks/${bankId}/hashes/${hashId}" class="inline">
        ${csrfOf(ctx)}<input type="hidden" name="change" value="${value}" /><button type="submit" class="secondary">
          ${label}
        </button>
      </form>`;
    render(
      ctx,
      bank.name,
      html`<section class="card">
          <p>
            <code>${bank.kind}</code>${bank.kind === 'pdq' ? ` within distance ${bank.distance}` : ''} · action
            <code>${bank.action}</code> · policy ${bank.policy ? html`<code>${bank.policy}</code>` : 'default'}
            ${bank.negative ? badge('negative') : null} ${bank.enabled ? badge('enabled') : badge('disabled')}
          </p>
          ${bank.description ? html`<p class="muted">${bank.description}</p>` : null}
          ${retroPassLine(bank.lastRetroPass)}
        </section>
        <form method="post" action="/console/hash-banks/${bankId}/flood" class="card decision" id="flood">
          <h2>Flood quarantine</h2>
          ${csrfOf(ctx)}
          <p class="hint">
            A hash matching more often than this in one window stops acting and waits in the
            <a href="/console/hash-quarantine">quarantine</a> for review. A blank threshold turns it off.
          </p>
          <label
            >Matches a window allows
            <input
              name="threshold"
              type="number"
              min="1"
              max="${HASH_BANK_LIMITS.floodThreshold}"
              value="${bank.flood ? String(bank.flood.threshold) : ''}"
          /></label>
          <label
            >Window, seconds
            <input
              name="windowSeconds"
              type="number"
              min="${HASH_BANK_LIMITS.floodWindowMin}"
              max="${HASH_BANK_LIMITS.floodWindowMax}"
              placeholder="${String(DEFAULT_FLOOD_WINDOW_SECONDS)}"
              value="${bank.flood ? String(bank.flood.windowSeconds) : ''}"
          /></label>
          <button type="submit">Save</button>
        </form>
        ${
          q.added !== undefined
            ? html`<p class="card" id="imported" role="status">
                Imported ${String(q.added)} new hashes; ${String(q.duplicates ?? 0)} the bank held already.
              </p>`
            : null
        }
        ${
          feeds.length > 0
            ? html`<table class="hash-feeds">
                <thead>
                  <tr>
                    <th>Feed</th>
                    <th>Source</th>
                    <th>Every</th>
                    <th>Last run</th>
                    <th>Added</th>
                    <th>Withdrawn</th>
                    <th>Next run</th>
                  </tr>
                </thead>
                <tbody>
                  ${feeds.map(
                    (feed) =>
                      html`<tr data-id="${feed.id}">
                        <td><code>${feed.url}</code>${feed.enabled ? null : html` ${badge('disabled')}`}</td>
                        <td><code>${feed.source}</code></td>
                        <td>${String(feed.intervalSeconds)} s</td>
                        <td>
                          ${
                            feed.lastRun
                              ? html`${badge(feed.lastRun.state)} ${when(feed.lastRun.at)}
                                ${feed.lastRun.failure ? html`<code>${feed.lastRun.failure}</code>` : null}`
                              : 'not yet'
                          }
                        </td>
                        <td>${feed.lastRun ? String(feed.lastRun.added) : '–'}</td>
                        <td>${feed.lastRun ? String(feed.lastRun.withdrawn) : '–'}</td>
                        <td>${when(feed.nextRunAt)}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
            : null
        }
        <table class="bank-hashes">
          <thead>
            <tr>
              <th>Hash</th>
              <th>Metadata</th>
              <th>State</th>
              <th>Review</th>
              <th>Added</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            ${page.hashes.map(
              (hash) =>
                html`<tr data-row data-id="${hash.id}">
                  <td><code>${hash.hash}</code></td>
                  <td>${Object.entries(hash.metadata).map(([key, value]) => html`<code>${key}</code>=${value} `)}</td>
                  <td>${hash.enabled ? badge('enabled') : badge('disabled')}</td>
                  <td>${badge(hash.review)}</td>
                  <td>${when(hash.createdAt)}</td>
                  <td>
                    ${hash.enabled ? button(hash.id, 'disable', 'Disable') : button(hash.id, 'enable', 'Enable')}
                    ${hash.review !== 'confirmed' ? button(hash.id, 'confirmed', 'Confirm') : null}
                    ${hash.review !== 'deconfirmed' ? button(hash.id, 'deconfirmed', 'Deconfirm') : null}
                    <form
                      method="post"
                      action="/console/hash-banks/${bankId}/hashes/${hash.id}/withdraw"
                      class="inline"
                    >
                      ${csrfOf(ctx)}<button type="submit" class="secondary">Withdraw</button>
                    </form>
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>
        <nav class="pager">
          ${page.hasMore && last ? html`<a rel="next" href="/console/hash-banks/${bankId}?after=${last.id}">More →</a>` : null}
        </nav>
        <form method="post" action="/console/hash-banks/${bankId}/hashes" class="card decision" id="new-hash">
          <h2>Add a hash</h2>
          ${csrfOf(ctx)}
          <label
            >Hash (hex) <input name="hash" required maxlength="64" pattern="[0-9a-fA-F]{32}([0-9a-fA-F]{32})?"
          /></label>
          <label>Metadata, one <code>key=value</code> a line <textarea name="metadata" rows="3"></textarea></label>
          <button type="submit">Add the hash</button>
          <p class="hint">A withdrawal deletes the hash at once; no copy is kept.</p>
        </form>
        <form method="post" action="/console/hash-banks/${bankId}/import" class="card decision" id="import-hashes">
          <h2>Import a hash file</h2>
          ${csrfOf(ctx)}
          <p class="hint">
            HMA's CSV format: one hash a row in the first column, metadata columns named by a header row
            (<code>hash,source,case</code>). At most ${String(HASH_BANK_LIMITS.importRows)} rows; a bad row fails the
            whole file, named by its line.
          </p>
          <label>File <input type="file" accept=".csv,text/csv,text/plain" data-read-into="import-csv" /></label>
          <label
            >Or paste it
            <textarea
              name="csv"
              id="import-csv"
              rows="6"
              required
              maxlength="${String(HASH_BANK_LIMITS.importChars)}"
            ></textarea>
          </label>
          <button type="submit">Import the file</button>
        </form>`,
      '/console/hash-banks',
    );
  });

  router.post('/hash-banks/:id/flood', adminOnly, ...change, async (ctx) => {
    const bankId = idParam(ctx, 'id');
    const form = parseWith(FloodForm, formOf(ctx), 'flood form');
    const patch = parseWith(
      UpdateHashBankBody,
      {
        flood: form.threshold === undefined ? null : { threshold: form.threshold, windowSeconds: form.windowSeconds },
      },
      'flood form',
    );
    await updateHashBank(caller(ctx), bankId, patch);
    ctx.redirect(`/console/hash-banks/${bankId}`);
  });

  router.post('/hash-banks/:id/hashes', adminOnly, ...change, async (ctx) => {
    const bankId = idParam(ctx, 'id');
    const form = parseWith(HashForm, formOf(ctx), 'hash form');
    const body = parseWith(
      AddHashesBody,
      { hashes: [{ hash: form.hash, metadata: metadataOf(form.metadata) }] },
      'hash form',
    );
    await addBankHashes(caller(ctx), bankId, body);
    ctx.redirect(`/console/hash-banks/${bankId}`);
  });

  router.post('/hash-banks/:id/import', adminOnly, ...change, async (ctx) => {
    const bankId = idParam(ctx, 'id');
    const form = parseWith(ImportForm, formOf(ctx), 'import form');
    const result = await importBankHashes(caller(ctx), bankId, parseWith(ImportHashesBody, form, 'import form'));
    ctx.redirect(`/console/hash-banks/${bankId}?added=${result.added.length}&duplicates=${result.duplicates}`);
  });

  router.post('/hash-banks/:id/hashes/:hashId', adminOnly, ...change, async (ctx) => {
    const bankId = idParam(ctx, 'id');
    const { change: asked } = parseWith(HashChange, formOf(ctx), 'hash change');
    const patch = asked === 'enable' ? { enabled: true } : asked === 'disable' ? { enabled: false } : { review: asked };
    await updateBankHash(caller(ctx), bankId, idParam(ctx, 'hashId'), patch);
    ctx.redirect(`/console/hash-banks/${bankId}`);
  });

  router.post('/hash-banks/:id/hashes/:hashId/withdraw', adminOnly, ...change, async (ctx) => {
    const bankId = idParam(ctx, 'id');
    await withdrawBankHash(caller(ctx), bankId, idParam(ctx, 'hashId'));
    ctx.redirect(`/console/hash-banks/${bankId}`);
  });
}

/** The bank's newest retroactive pass, as a line of its card. */
function retroPassLine(pass: RetroPassView | null) {
  if (!pass) return null;
  return html`<p class="muted" data-retro-pass="${pass.state}">
    Matching stored records (${pass.trigger}, ${pass.hashes} hash${pass.hashes === 1 ? '' : 'es'}): ${badge(pass.state)}
    ${pass.scanned} compared · ${pass.matched} matched · ${pass.flagged} flagged · ${pass.heldByHumans} left as people
    decided${pass.error ? html` · <code>${pass.error}</code>` : null}
  </p>`;
}
