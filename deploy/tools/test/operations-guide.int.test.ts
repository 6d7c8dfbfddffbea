import fs from 'node:fs';
import path from 'node:path';
import { README, SERVICES, variables } from '../env-docs';

// deploy/README.md documents every environment variable each service reads; this fails when a service gains a
// variable the guide does not list. Regenerate the tables with `node deploy/tools/env-docs.js --write`.
const readme = fs.readFileSync(README, 'utf8');

function section(service: string): string {
  const start = readme.indexOf(`<!-- env:${service} -->`);
  const end = readme.indexOf(`<!-- /env:${service} -->`);
  if (start < 0 || end < start) throw new Error(`deploy/README.md lacks the env markers of ${service}`);
  return readme.slice(start, end);
}

describe('operations guide', () => {
  test.each(SERVICES)('lists every variable %s reads, with its default', (service) => {
    const documented = [...section(service).matchAll(/^\| `([A-Z][A-Z0-9_]*)`\s*\|\s*([^|]*?)\s*\|/gm)].map(
      ([, name, fallback]) => ({ name, fallback }),
    );
    const read = variables(service);
    expect(read.length).toBeGreaterThan(3);
    expect(documented.map((row) => row.name).sort()).toEqual(read.map((v) => v.name).sort());
    for (const v of read.filter((entry) => entry.required)) {
      expect(documented.find((row) => row.name === v.name)?.fallback).toBe('**required**');
    }
  });

  test('the parser reads names, defaults and required variables from a config schema', () => {
    const gateway = variables('gateway');
    expect(gateway.find((v) => v.name === 'MONGO_URL')).toMatchObject({ required: true });
    expect(gateway.find((v) => v.name === 'HTTP_PORT')).toMatchObject({ required: false, default: '8080' });
    const moderator = variables('moderator');
    expect(moderator.find((v) => v.name === 'OPENAI_BASE_URL')).toMatchObject({ required: false, default: undefined });
    // Every key of the notifier's schema, in order, with the shared blocks it spreads (`...serviceEnv`) in place.
    const root = path.join(__dirname, '..', '..', '..');
    const shared = fs.readFileSync(path.join(root, 'proto', 'src', 'platform', 'service-env.ts'), 'utf8');
    const keysOf = (text: string) => [...text.matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map(([, name]) => name);
    const blocks = new Map(
      [...shared.matchAll(/^export const (\w+) = \{\n([\s\S]*?)\n\};/gm)].map(([, name, body]) => [
        name,
        keysOf(body!),
      ]),
    );
    const source = fs.readFileSync(path.join(root, 'notifier', 'src', 'config.ts'), 'utf8');
    const keys = [...source.matchAll(/^ {2}(?:([A-Z][A-Z0-9_]*):|\.\.\.(\w+),)/gm)].flatMap(([, name, spread]) =>
      spread ? (blocks.get(spread) ?? [`unknown block ${spread}`]) : [name],
    );
    expect(keys).toContain('KAFKA_BROKERS');
    expect(variables('notifier').map((v) => v.name)).toEqual(keys);
  });
});
