import { execFileSync } from 'node:child_process';
import path from 'node:path';

// The built modules (dist/), as a process loads them: `npm run build` first.
const DIST = path.resolve(__dirname, '../dist');

/** The packages under node_modules that loading `files` (in a fresh Node process) pulls in. */
function packagesLoadedBy(...files: string[]): string[] {
  const script = `
    for (const file of ${JSON.stringify(files)}) require(file);
    const names = Object.keys(require.cache).map((f) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(f)?.[1]);
    process.stdout.write(JSON.stringify([...new Set(names.filter(Boolean))]));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as string[];
}

describe('start-up of the moderator', () => {
  it('loads no text matcher, image or feed HTTP client on its main thread', () => {
    const loaded = packagesLoadedBy(path.join(DIST, 'app.js'));
    // Loaded at all: the list is the one the assertions below read.
    expect(loaded).toEqual(expect.arrayContaining(['mongodb', 'zod']));
    expect(loaded).not.toContain('obscenity');
    expect(loaded).not.toContain('libphonenumber-js');
    expect(loaded).not.toContain('card-validator');
    expect(loaded).not.toContain('undici');
  });

  it('starts an engine thread without zod (the rule schemas), the profanity matcher or the contact detector', () => {
    const loaded = packagesLoadedBy(path.join(DIST, 'engine', 'engine-worker.js'));
    expect(loaded).toEqual(expect.arrayContaining(['re2js', 'lru-cache']));
    expect(loaded).not.toContain('obscenity');
    expect(loaded).not.toContain('zod');
    expect(loaded).not.toContain('libphonenumber-js');
    expect(loaded).not.toContain('card-validator');
  });

  it('loads the contact detector with the first rule set that has a pii strategy', () => {
    const loaded = packagesLoadedBy(path.join(DIST, 'engine', 'rule-set.js'));
    expect(loaded).not.toContain('libphonenumber-js');
    const script = `
      const { CompiledRuleSets } = require(${JSON.stringify(path.join(DIST, 'engine', 'rule-set.js'))});
      const json = JSON.stringify([{ entities: [], strategies: [{ type: 'pii' }] }]);
      new CompiledRuleSets(1 << 20).get('k', json);
      process.stdout.write(String(Object.keys(require.cache).some((f) => f.includes('libphonenumber-js'))));`;
    expect(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })).toBe('true');
  });
});
