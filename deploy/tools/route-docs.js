'use strict';
// Lists the gateway's HTTP routes as a Markdown table for README.md, read from the code that serves them:
// - the API and `/openapi.json`: the OpenAPI document the gateway serves (built from its `api.route({...})`
//   declarations), for method, path, summary and whether an API key is needed;
// - the console and the appeal page: the routers the gateway mounts, for method, path and whether a console session
//   (or an admin's) is needed; their purposes are written below, and a page without one is an error;
// - the admin port: the paths `proto/src/platform/admin-server.ts` answers.
// `node deploy/tools/route-docs.js` prints the table (after `npm run build`), `--write` puts it between the markers of
// README.md (the API, public pages and admin port) and docs/console.md (the console's pages); a deploy test checks that
// both tables are the ones the code gives.
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const README = path.join(ROOT, 'README.md');
const CONSOLE_DOC = path.join(ROOT, 'docs', 'console.md');

/** Whether a row belongs to the console's table (docs/console.md) rather than the README's. */
const isConsole = (row) => row.path === '/console' || row.path.startsWith('/console/');
/** The rows each document lists: `[file, rows]`. */
const byDocument = (rows) => [
  [README, rows.filter((row) => !isConsole(row))],
  [CONSOLE_DOC, rows.filter(isConsole)],
];
const START = '<!-- routes -->';
const END = '<!-- /routes -->';

/** What each console and appeal page is for (its method and path come from the routers). */
const PAGE_PURPOSES = {
  'GET /console': 'Redirects to the inbox.',
  'GET /console/assets/:name': 'The console’s CSS and script.',
  'GET /console/sign-in': 'The sign-in form.',
  'POST /console/sign-in': 'Signs a member in.',
  'POST /console/sign-out': 'Signs the member out.',
  'GET /console/records': 'The inbox: flagged records, newest first, with filters.',
  'GET /console/records/:id': 'A record, its reasons and its history.',
  'POST /console/records/:id/moderation': 'Sets a record’s status by hand.',
  'GET /console/users': 'Users, with filters.',
  'GET /console/users/:id': 'A user: status and its history, records, appeals.',
  'POST /console/users/:id/status': 'Suspends, bans or reinstates a user.',
  'GET /console/appeals': 'Open appeals.',
  'POST /console/appeals/:id/decision': 'Approves or rejects an appeal.',
  'GET /console/reports': 'Open reports: trusted flaggers first, then the most reported targets, then the oldest.',
  'POST /console/reports/:id/decision': 'Acts on a report, or decides to take no action, with a reason.',
  'POST /console/reports/:id/complaint/decision': 'Upholds a reporter’s complaint (acts on the target) or rejects it.',
  'GET /console/settings': 'Rules, rule set versions and settings.',
  'POST /console/settings': 'Changes the settings.',
  'POST /console/rules': 'Writes a new rule set version.',
  'POST /console/rules/versions/:version/:action': 'Promotes, rolls back or runs in shadow a rule set version.',
  'POST /console/backtests': 'Backtests a rule set version (the rules page’s “Backtest this draft”).',
  'GET /console/backtests/:id': 'A backtest’s progress and result.',
  'POST /console/backtests/:id/cancel': 'Cancels a backtest.',
  'POST /console/backtests/:id/apply': 'Applies a backtest’s version, once live, to its records (the confirm button).',
  'GET /console/retroactions/:id': 'A retroaction’s predicted effect, progress and cancel button.',
  'POST /console/retroactions/:id/cancel': 'Cancels a retroaction.',
  'GET /console/precision': 'Each rule’s flags, human reviews and precision over a window, with a chart per day.',
  'GET /console/transparency-report':
    'The transparency report of a period: notices, own-initiative restrictions, complaints, automated means, with charts.',
  'GET /console/transparency-report/csv': 'The same report as a CSV download.',
  'GET /console/webhooks': 'Webhook endpoints.',
  'GET /console/webhooks/:id': 'An endpoint and its delivery log.',
  'POST /console/deliveries/:id/retry': 'Sends a delivery again.',
  'POST /console/webhooks/:id/replay': 'Sends an endpoint’s failed deliveries again.',
  'GET /appeal': 'The appeal page an end user reaches from their `appealUrl`.',
  'POST /appeal': 'Sends the end user’s appeal.',
  'GET /complaint': 'The page a reporter reaches from the outcome email, to complain about a decision not to act.',
  'POST /complaint': 'Sends the reporter’s complaint.',
  'GET /console/policies': 'Policies: the grounds rules and decisions name.',
  'POST /console/policies': 'Adds a policy.',
  'POST /console/policies/:id/delete': 'Deletes a policy.',
  'GET /console/hash-banks': 'Hash banks: the list, and a form to create one.',
  'POST /console/hash-banks': 'Creates a hash bank.',
  'GET /console/hash-banks/:id': 'A hash bank and its hashes, paged.',
  'POST /console/hash-banks/:id/hashes': 'Adds a hash with its metadata.',
  'POST /console/hash-banks/:id/import': "Imports a hash file in HMA's CSV format, whole or not at all.",
  'POST /console/hash-banks/:id/hashes/:hashId': 'Disables, enables, confirms or deconfirms a hash.',
  'POST /console/hash-banks/:id/hashes/:hashId/withdraw': 'Withdraws a hash: it is deleted at once.',
  'POST /console/hash-banks/:id/flood': 'Sets or turns off a bank’s flood quarantine threshold and window.',
  'GET /console/hash-quarantine': 'Hashes in flood quarantine, with the matches each holds.',
  'POST /console/hash-quarantine/:hashId/release': 'Releases a quarantined hash: its held matches are applied.',
  'POST /console/hash-quarantine/:hashId/dismiss':
    'Dismisses a quarantined hash: its held matches are dropped, the hash disabled.',
};

/** What each path of the admin port is for. */
const ADMIN_PURPOSES = {
  '/livez': 'The process answers (no dependency checked).',
  '/readyz': 'Dependencies reachable; 503 while draining.',
  '/metrics': 'Prometheus metrics.',
};

/** The gateway's modules from its build (`gateway/dist`); the deploy test passes its sources instead. */
function builtGateway() {
  const dist = path.join(ROOT, 'gateway', 'dist');
  return {
    app: require(path.join(dist, 'app.js')),
    config: require(path.join(dist, 'config.js')),
    proto: require('@vigil/proto'),
    pino: require('pino'),
  };
}

/**
 * The gateway's app, composed with stand-ins for every client: composing does no I/O, and nothing here sends a
 * request, so no stand-in is ever called.
 */
function composeApp(gateway) {
  const unused = () => {
    throw new Error('route-docs composes the app without clients');
  };
  /** @type {any} */
  const stub = new Proxy({}, { get: () => unused });
  /** @type {any} */
  const db = { collection: () => stub };
  const settings = gateway.app.appSettings(
    gateway.config.loadConfig({
      MONGO_URL: 'mongodb://127.0.0.1:1/',
      KAFKA_BROKERS: '127.0.0.1:1',
      MODERATOR_ADDRESS: '127.0.0.1:1',
      MODERATOR_GRPC_TOKEN: 'x'.repeat(32),
    }),
  );
  return gateway.app.createApp({
    log: gateway.pino({ level: 'silent' }),
    db,
    authenticator: stub,
    versions: new gateway.proto.TenantVersions(),
    moderator: stub,
    commands: stub,
    topics: gateway.proto.topicNames(''),
    rateLimiter: stub,
    // The appeal page is mounted only with a secret (as in any deployment that offers appeals).
    settings: { ...settings, appealTokenSecret: 'route-docs-appeal-secret-of-32-characters' },
  });
}

/** The routers the app mounts (@koa/router marks its middleware with its router), in mounting order. */
function routersOf(app) {
  return app.middleware.map((middleware) => middleware.router).filter(Boolean);
}

/** The served OpenAPI document, from the handler of `GET /openapi.json` (called without a request). */
async function openApiOf(routers) {
  for (const router of routers) {
    const layer = router.stack.find((l) => l.path === '/openapi.json' && l.methods.includes('GET'));
    if (!layer) continue;
    const ctx = {};
    await layer.stack[layer.stack.length - 1](ctx, () => Promise.resolve());
    return JSON.parse(ctx.body);
  }
  throw new Error('the gateway serves no GET /openapi.json');
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Console and appeal pages: method, path and the session they need (from the router's middleware order). */
function pagesOf(routers, apiPaths) {
  const pages = [];
  for (const router of routers) {
    let session = false;
    for (const layer of router.stack) {
      const names = layer.stack.map((fn) => fn.name);
      if (layer.methods.length === 0) {
        if (names.includes('requireSession')) session = true;
        continue;
      }
      // The console's catch-all (any method, any other path) answers its 404 page.
      if (layer.methods.length > METHODS.length + 1) continue;
      for (const method of layer.methods.filter((m) => METHODS.includes(m))) {
        if (apiPaths.has(`${method} ${layer.path}`)) continue;
        const key = `${method} ${layer.path}`;
        const auth = !session
          ? layer.path.startsWith('/appeal')
            ? 'signed appeal link'
            : layer.path.startsWith('/complaint')
              ? 'signed complaint link'
              : 'none'
          : names.includes('adminOnly')
            ? 'console session (admin)'
            : 'console session';
        pages.push({ method, path: layer.path, purpose: PAGE_PURPOSES[key], auth, key });
      }
    }
  }
  return pages;
}

/** Paths the admin server answers, from its source (one `route === '/…'` each). */
function adminPaths() {
  const source = fs.readFileSync(path.join(ROOT, 'proto', 'src', 'platform', 'admin-server.ts'), 'utf8');
  return [...source.matchAll(/route === '(\/[a-z]+)'/g)].map(([, found]) => found);
}

/**
 * Every route: `{ method, path, purpose, auth }`, the API's in declaration order, then the pages and the admin port.
 * Throws when a page or an admin path has no purpose written here, or a purpose names nothing served.
 */
async function routes(gateway = builtGateway()) {
  const routers = routersOf(composeApp(gateway));
  const openApi = await openApiOf(routers);
  const rows = [];
  const apiPaths = new Set();
  for (const [openApiPath, operations] of Object.entries(openApi.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const koaPath = openApiPath.replace(/\{(\w+)\}/g, ':$1');
      apiPaths.add(`${method.toUpperCase()} ${koaPath}`);
      const publicRoute = Array.isArray(operation.security) && operation.security.length === 0;
      rows.push({
        method: method.toUpperCase(),
        path: openApiPath,
        purpose: operation.summary,
        auth: publicRoute ? 'none' : 'API key',
      });
    }
  }
  const pages = pagesOf(routers, apiPaths);
  const missing = pages.filter((page) => !page.purpose).map((page) => page.key);
  const stale = Object.keys(PAGE_PURPOSES).filter((key) => !pages.some((page) => page.key === key));
  if (missing.length || stale.length) {
    throw new Error(
      `deploy/tools/route-docs.js: pages without a purpose: ${missing.join(', ') || 'none'}; ` +
        `purposes of no page: ${stale.join(', ') || 'none'}`,
    );
  }
  for (const { method, path: pagePath, purpose, auth } of pages) {
    rows.push({ method, path: pagePath.replace(/:(\w+)/g, '{$1}'), purpose, auth });
  }
  for (const adminPath of adminPaths()) {
    const purpose = ADMIN_PURPOSES[adminPath];
    if (!purpose) throw new Error(`deploy/tools/route-docs.js: admin path ${adminPath} has no purpose`);
    rows.push({ method: 'GET', path: adminPath, purpose, auth: 'none (admin port)' });
  }
  return rows;
}

function table(rows) {
  const cell = (text) => String(text).replace(/\|/g, '\\|');
  return [
    '| Method | Path | Purpose | Auth |',
    '| --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.method} | \`${cell(r.path)}\` | ${cell(r.purpose)} | ${r.auth} |`),
  ].join('\n');
}

/** Replaces the text between the README's route markers with the table. */
function updateReadme(text, rows) {
  const from = text.indexOf(START);
  const to = text.indexOf(END);
  if (from < 0 || to < from) throw new Error(`a document lacks the ${START} … ${END} markers`);
  return `${text.slice(0, from + START.length)}\n\n${table(rows)}\n\n${text.slice(to)}`;
}

/** The README's table as rows (`{ method, path, purpose, auth }`), read back from between its markers. */
function readmeRows(text) {
  const from = text.indexOf(START);
  const to = text.indexOf(END);
  if (from < 0 || to < from) throw new Error(`a document lacks the ${START} … ${END} markers`);
  return text
    .slice(from, to)
    .split('\n')
    .filter((line) => line.startsWith('| ') && !/^\| (Method|-+) /.test(line))
    .map((line) => {
      const cells = line
        .slice(2, -2)
        .split(/ +\| +/)
        .map((c) => c.trim().replace(/\\\|/g, '|'));
      const [method = '', quoted = '', purpose = '', auth = ''] = cells;
      return { method, path: quoted.replace(/^`|`$/g, ''), purpose, auth };
    });
}

module.exports = { routes, table, updateReadme, readmeRows, byDocument, README, CONSOLE_DOC, START, END };

if (require.main === module) {
  routes()
    .then(async (rows) => {
      if (!process.argv.includes('--write')) {
        process.stdout.write(`${table(rows)}\n`);
        return;
      }
      // Formatted like the rest of the repository, so `npm run format:check` stays green after a regeneration.
      const prettier = require('prettier');
      for (const [file, documentRows] of byDocument(rows)) {
        const options = await prettier.resolveConfig(file);
        const text = await prettier.format(updateReadme(fs.readFileSync(file, 'utf8'), documentRows), {
          ...options,
          filepath: file,
        });
        fs.writeFileSync(file, text);
      }
    })
    .catch((err) => {
      process.stderr.write(`${err.stack || err.message}\n`);
      process.exit(1);
    });
}
