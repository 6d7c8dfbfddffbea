import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { platformCopyProblems, REQUIRED, SERVICES } from '../platform-copies';

// The check `npm test` runs over the services' src/platform/ copies, on this repository and on scratch trees.
describe('platform copies check', () => {
  let root: string;

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-platform-'));
    for (const service of SERVICES) {
      const dir = path.join(root, service, 'src', 'platform');
      fs.mkdirSync(dir, { recursive: true });
      for (const name of REQUIRED) fs.writeFileSync(path.join(dir, name), `// ${name}\n`);
    }
  });

  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const write = (service: string, name: string, text: string) =>
    fs.writeFileSync(path.join(root, service, 'src', 'platform', name), text);

  it('passes on this repository', () => {
    expect(platformCopyProblems()).toEqual([]);
  });

  it('passes when every copy is the same, with a file only some services have and tests of their own', () => {
    write('moderator', 'retry.ts', '// retry\n');
    write('notifier', 'retry.ts', '// retry\n');
    write('moderator', 'logger.test.ts', '// a test of the moderator copy\n');
    expect(platformCopyProblems(root)).toEqual([]);
  });

  it('names the file and the services when a copy drifted', () => {
    write('notifier', 'logger.ts', '// logger, changed in one service\n');
    write('moderator', 'retry.ts', '// retry\n');
    write('notifier', 'retry.ts', '// retry \n');
    expect(platformCopyProblems(root)).toEqual([
      expect.stringMatching(/^src\/platform\/logger\.ts differs between gateway, notifier:/),
      expect.stringMatching(/^src\/platform\/retry\.ts differs between moderator, notifier:/),
    ]);
  });

  it('reports a required file a service lacks', () => {
    fs.rmSync(path.join(root, 'gateway', 'src', 'platform', 'shutdown.ts'));
    expect(platformCopyProblems(root)).toEqual(['gateway/src/platform/shutdown.ts is missing']);
  });
});
