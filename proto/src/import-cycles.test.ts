import path from 'node:path';
import madge from 'madge';

// Every service's source is free of import cycles, imports of types only included: a module's dependencies load
// before it, and the layers (in the gateway: routes and console pages → use cases → stores and clients) read one way.
const ROOT = path.resolve(__dirname, '../..');
const SOURCES = ['proto/src', 'gateway/src', 'moderator/src', 'notifier/src'];
async function cyclesIn(dir: string): Promise<string[][]> {
  const graph = await madge(path.join(ROOT, dir), {
    baseDir: path.join(ROOT, dir),
    fileExtensions: ['ts'],
    excludeRegExp: [/\.test\.ts$/, /\/generated\//, /\.d\.ts$/],
    detectiveOptions: { ts: { skipTypeImports: false }, es6: { skipTypeImports: false } },
  });
  return graph.circular();
}

describe('import cycles', () => {
  it.each(SOURCES)('finds none in %s', async (dir) => {
    expect(await cyclesIn(dir)).toEqual([]);
  });

  it('finds one where two modules import each other, types only', async () => {
    expect(await cyclesIn('proto/test/fixtures/import-cycle')).toEqual([['a.ts', 'b.ts']]);
  });
});
