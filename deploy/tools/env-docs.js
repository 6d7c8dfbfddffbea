'use strict';
// Lists each service's environment variables from its `src/config.ts` (the zod schema is the source of truth: one
// key per line, its doc comment above, `.default(...)` in its expression; `...serviceEnv` and `...consumerEnv` stand
// for the shared variables of proto/src/platform/service-env.ts) as Markdown tables for deploy/README.md.
// `node deploy/tools/env-docs.js` prints the tables, `--write` puts them into the README between its markers; a deploy
// test checks that the README names every variable.
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const SERVICES = ['gateway', 'moderator', 'notifier'];

/** The variables shared by every service (`...serviceEnv`) or every consumer (`...consumerEnv`), as source lines. */
function sharedBlocks() {
  const source = fs.readFileSync(path.join(ROOT, 'proto', 'src', 'platform', 'service-env.ts'), 'utf8');
  /** @type {Record<string, string>} */
  const blocks = {};
  for (const match of source.matchAll(/^export const (\w+) = \{\n([\s\S]*?)\n\};/gm)) {
    blocks[match[1] ?? ''] = match[2] ?? '';
  }
  return blocks;
}

/** [{ name, default, required, meaning }] in declaration order. */
function variables(service) {
  const source = fs.readFileSync(path.join(ROOT, service, 'src', 'config.ts'), 'utf8');
  const shared = sharedBlocks();
  const body = source
    .slice(source.indexOf('z.object({'), source.indexOf('\n});'))
    .replace(/^ {2}\.\.\.(\w+),$/gm, (_line, name) => {
      if (shared[name] === undefined)
        throw new Error(`${service}/src/config.ts spreads ${name}, not in service-env.ts`);
      return shared[name];
    });
  const keyPattern =
    /^ {2}(?:\/\*\*([\s\S]*?)\*\/\s*\n {2})?([A-Z][A-Z0-9_]*): ([\s\S]*?)(?=\n {2}(?:\/\*\*|[A-Z][A-Z0-9_]*:)|(?![\s\S]))/gm;
  const found = [];
  for (const match of body.matchAll(keyPattern)) {
    const [, comment = '', name = '', expression = ''] = match;
    const fallback = /\.default\(([\s\S]*?)\)\s*(?:\.|,?\s*$)/.exec(expression);
    const meaning = comment
      .split('\n')
      .map((line) => line.replace(/^\s*\*\s?/, '').trim())
      .filter(Boolean)
      .join(' ');
    found.push({
      name,
      default: fallback?.[1] !== undefined ? fallback[1].trim().replace(/^'(.*)'$/, '$1') : undefined,
      required: !fallback && !/\.optional\(\)/.test(expression),
      meaning,
    });
  }
  return found;
}

function table(service) {
  const rows = variables(service).map((v) => {
    const fallback = v.required
      ? '**required**'
      : v.default === undefined
        ? 'unset'
        : v.default === ''
          ? '(empty)'
          : `\`${v.default}\``;
    return `| \`${v.name}\` | ${fallback} | ${v.meaning.replace(/\|/g, '\\|')} |`;
  });
  return ['| Variable | Default | Meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

const README = path.join(ROOT, 'deploy', 'README.md');

/** Replaces the text between `<!-- env:<service> -->` and `<!-- /env:<service> -->` with the service's table. */
function updateReadme(text) {
  let updated = text;
  for (const service of SERVICES) {
    const start = `<!-- env:${service} -->`;
    const end = `<!-- /env:${service} -->`;
    const from = updated.indexOf(start);
    const to = updated.indexOf(end);
    if (from < 0 || to < from) throw new Error(`deploy/README.md lacks the ${start} … ${end} markers`);
    updated = `${updated.slice(0, from + start.length)}\n\n### ${service}\n\n${table(service)}\n\n${updated.slice(to)}`;
  }
  return updated;
}

module.exports = { variables, table, updateReadme, README, SERVICES };

if (require.main === module) {
  if (process.argv.includes('--write')) {
    // Formatted like the rest of the repository, so `npm run format:check` stays green after a regeneration.
    const prettier = require('prettier');
    prettier
      .resolveConfig(README)
      .then((options) =>
        prettier.format(updateReadme(fs.readFileSync(README, 'utf8')), { ...options, filepath: README }),
      )
      .then((text) => fs.writeFileSync(README, text))
      .catch((err) => {
        process.stderr.write(`${err.stack || err.message}\n`);
        process.exit(1);
      });
  } else for (const service of SERVICES) process.stdout.write(`### ${service}\n\n${table(service)}\n\n`);
}
