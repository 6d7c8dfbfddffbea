import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LOADER_OPTIONS, loadModerationPackage } from '../../src/loader';

const PROTO_DIR = path.resolve(__dirname, '..', '..');

function listFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

describe('generated gRPC types', () => {
  let outDir: string;
  beforeAll(() => {
    outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-proto-'));
  });
  afterAll(() => fs.rmSync(outDir, { recursive: true, force: true }));

  // The types are build output (`npm run build` and `deploy/local/ensure.js` write them, git ignores them): a build
  // that missed a change to a .proto still fails here, before a service is typed against stale messages.
  it('match what the generator produces from the .proto files with the loader options (no drift)', () => {
    const script = JSON.parse(fs.readFileSync(path.join(PROTO_DIR, 'package.json'), 'utf8')).scripts.generate as string;
    const args = script
      .split(' ')
      .slice(1)
      .map((arg) => (arg.startsWith('--outDir=') ? `--outDir=${outDir}` : arg));
    execFileSync(path.join(PROTO_DIR, '..', 'node_modules', '.bin', 'proto-loader-gen-types'), args, {
      cwd: PROTO_DIR,
    });
    const built = path.join(PROTO_DIR, 'src', 'generated');
    expect(listFiles(outDir)).toEqual(listFiles(built));
    for (const file of listFiles(built)) {
      expect(fs.readFileSync(path.join(outDir, file), 'utf8')).toBe(fs.readFileSync(path.join(built, file), 'utf8'));
    }
  });

  it('are generated with the options of LOADER_OPTIONS, the ones the runtime loader uses', () => {
    const script = JSON.parse(fs.readFileSync(path.join(PROTO_DIR, 'package.json'), 'utf8')).scripts.generate as string;
    const flags = new Set(script.split(' ').filter((arg) => arg.startsWith('--')));
    const expected = new Set<string>();
    if (LOADER_OPTIONS.keepCase) expected.add('--keepCase');
    if (LOADER_OPTIONS.longs === Number) expected.add('--longs=Number');
    if (LOADER_OPTIONS.longs === String) expected.add('--longs=String');
    if (LOADER_OPTIONS.enums === String) expected.add('--enums=String');
    if (LOADER_OPTIONS.defaults) expected.add('--defaults');
    if (LOADER_OPTIONS.oneofs) expected.add('--oneofs');
    const optionFlags = [...flags].filter((flag) => /^--(keepCase|longs|enums|defaults|oneofs)/.test(flag));
    expect(new Set(optionFlags)).toEqual(expected);
    expect(typeof loadModerationPackage().vigil.moderation.v1.ModerationService).toBe('function');
  });
});
