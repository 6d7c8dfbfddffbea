import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import ignore from '@balena/dockerignore';
import { chartTools, named, renderChart } from '../../tools/chart';
import { ROOT, testServers, uniqueName, waitFor } from '../../test-support';

// The service images, checked without a Docker daemon: each Dockerfile is parsed and held to the image rules (build
// from the repository root, two stages, only built output in the runtime stage, non-root, exec-form CMD), and each
// built service is started the way its image starts it, with the environment the chart gives it.
const SERVICES = ['gateway', 'moderator', 'notifier'] as const;
type Service = (typeof SERVICES)[number];
const BASE_IMAGE = 'node:20-bookworm-slim';

interface Instruction {
  keyword: string;
  flags: Record<string, string>;
  args: string;
}

interface Dockerfile {
  /** ARGs declared before the first FROM, with their defaults. */
  args: Record<string, string>;
  build: Instruction[];
  runtime: Instruction[];
}

const FLAG = /^--([\w-]+)=(\S+)\s+/;

/** Splits a two-stage Dockerfile into instructions (continuations joined, comments dropped). */
function parseDockerfile(text: string): Dockerfile {
  const logical = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const args: Record<string, string> = {};
  const stages: Instruction[][] = [];
  for (const line of logical) {
    const match = /^(\S+)\s+(.*)$/.exec(line);
    if (!match?.[1] || match[2] === undefined) throw new Error(`unparsable Dockerfile line: ${line}`);
    const flags: Record<string, string> = {};
    let remaining = match[2];
    for (let flag = FLAG.exec(remaining); flag?.[1] && flag[2]; flag = FLAG.exec(remaining)) {
      flags[flag[1]] = flag[2];
      remaining = remaining.slice(flag[0].length);
    }
    const instruction: Instruction = { keyword: match[1].toUpperCase(), flags, args: remaining };
    if (instruction.keyword === 'FROM') stages.push([]);
    const current = stages[stages.length - 1];
    if (current) {
      current.push(instruction);
      continue;
    }
    if (instruction.keyword !== 'ARG') throw new Error(`${instruction.keyword} before the first FROM`);
    const [name = '', value = ''] = remaining.split('=');
    args[name] = value;
  }
  const [build, runtime, ...rest] = stages;
  if (!build || !runtime || rest.length > 0) throw new Error(`expected two stages, found ${stages.length}`);
  return { args, build, runtime };
}

function only(stage: Instruction[], keyword: string): Instruction[] {
  return stage.filter((instruction) => instruction.keyword === keyword);
}

function copyParts(instruction: Instruction): { sources: string[]; destination: string } {
  const parts = instruction.args.split(/\s+/);
  return { sources: parts.slice(0, -1), destination: parts[parts.length - 1] ?? '' };
}

function last<T>(items: T[]): T | undefined {
  return items[items.length - 1];
}

const dockerignore = ignore().add(fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8'));

/** Every file under `dir` (relative to the repository root), without node_modules. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.name === 'node_modules') return [];
    return entry.isDirectory() ? filesUnder(relative) : [relative];
  });
}

describe.each(SERVICES)('%s image', (service) => {
  const dockerfile = parseDockerfile(fs.readFileSync(path.join(ROOT, service, 'Dockerfile'), 'utf8'));
  const { build, runtime } = dockerfile;
  const baseOf = (stage: Instruction[]) =>
    (stage[0]?.args.split(/\s+/)[0] ?? '').replace(/^\$\{(\w+)\}$/, (_, name: string) => dockerfile.args[name] ?? '');

  test(`two stages on ${BASE_IMAGE}: build with tsc, run the built output`, () => {
    expect(build[0]?.args).toMatch(/\sAS build$/i);
    expect([baseOf(build), baseOf(runtime)]).toEqual([BASE_IMAGE, BASE_IMAGE]);
    const runs = only(build, 'RUN').map((instruction) => instruction.args);
    expect(runs).toContainEqual(expect.stringMatching(/^npm (ci|install)\b/));
    expect(runs).toContain(`npx tsc -b ${service}`);
    expect(runs).toContainEqual(
      expect.stringMatching(new RegExp(`npm (ci|install) --omit=dev --workspace ${service}\\b`)),
    );
    expect(only(runtime, 'RUN')).toEqual([]);
  });

  test('runs as a non-root user with an exec-form CMD from the service folder', () => {
    const users = only(runtime, 'USER');
    expect(users).toHaveLength(1);
    const [uid, gid] = (users[0]?.args ?? '').split(':').map(Number);
    expect(uid).toBe(10001);
    expect(gid).toBe(10001);
    const workdirs = only(runtime, 'WORKDIR');
    expect(last(workdirs)?.args).toBe(`/app/${service}`);
    const cmds = only(runtime, 'CMD');
    expect(cmds).toHaveLength(1);
    expect(JSON.parse(cmds[0]?.args ?? 'null')).toEqual(['node', 'dist/main.js']);
    expect(only(runtime, 'ENTRYPOINT')).toEqual([]);
  });

  test('every source copied from the build context exists and is not excluded by .dockerignore', () => {
    const fromContext = [...build, ...runtime].filter(
      (instruction) => instruction.keyword === 'COPY' && !instruction.flags.from,
    );
    expect(fromContext.length).toBeGreaterThan(0);
    for (const instruction of fromContext) {
      for (const source of copyParts(instruction).sources) {
        const relative = source.replace(/\/$/, '');
        expect({ source, exists: fs.existsSync(path.join(ROOT, relative)) }).toEqual({ source, exists: true });
        const files = fs.statSync(path.join(ROOT, relative)).isDirectory() ? filesUnder(relative) : [relative];
        const sent = files.filter((file) => !dockerignore.ignores(file));
        expect({ source, sent: sent.length > 0 }).toEqual({ source, sent: true });
        // Build output and tests never come from the context: the image builds its own.
        expect(sent.filter((file) => /(^|\/)(dist|test)\/|\.test\.ts$|\.tsbuildinfo$/.test(file))).toEqual([]);
      }
    }
  });

  test('the runtime stage copies only built output, manifests and production dependencies that the build produces', () => {
    const copies = only(runtime, 'COPY');
    const fromBuild = copies.filter((instruction) => instruction.flags.from === 'build');
    const sources = fromBuild.flatMap((instruction) => copyParts(instruction).sources);
    for (const source of sources) {
      expect(source.startsWith('/app/')).toBe(true);
      // The same path in this checkout after `npm install` and `tsc -b`.
      const relative = source.slice('/app/'.length).replace(/\/$/, '') || '.';
      expect({ source, exists: fs.existsSync(path.join(ROOT, relative)) }).toEqual({ source, exists: true });
      expect(relative).not.toMatch(/(^|\/)src(\/|$)/);
    }
    expect(sources).toEqual(
      expect.arrayContaining([
        '/app/node_modules/',
        `/app/${service}/dist/`,
        '/app/proto/dist/',
        '/app/proto/vigil/',
        `/app/${service}/package.json`,
      ]),
    );
    const otherServices = SERVICES.filter((other) => other !== service);
    expect(sources.filter((source) => otherServices.some((other) => source.includes(`/${other}/`)))).toEqual([]);
    expect(fs.existsSync(path.join(ROOT, service, 'dist', 'main.js'))).toBe(true);
  });
});

beforeAll(
  async () => {
    // Renders the chart below; the first run builds helm (minutes), later runs find it cached.
    await chartTools();
  },
  15 * 60 * 1000,
);

test('the moderator image holds the script the chart topics Job runs', async () => {
  const { runtime } = parseDockerfile(fs.readFileSync(path.join(ROOT, 'moderator', 'Dockerfile'), 'utf8'));
  const rendered = await renderChart({ 'mongo.url': 'mongodb://m:27017', 'kafka.brokers': 'k:9092' });
  const command = named(rendered, 'Job', 'vigil-topics').spec.template.spec.containers[0].command as string[];
  const workdir = last(only(runtime, 'WORKDIR'))?.args ?? '/';
  const script = path.posix.resolve(workdir, command[1] ?? '');
  const copied = only(runtime, 'COPY')
    .map(copyParts)
    .find(({ destination }) => path.posix.resolve('/app', destination) === script);
  expect(copied?.sources).toEqual(['deploy/images/init-topics.js']);
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('built services start with the chart environment', () => {
  const { kafkaBrokers, mongoUrl } = testServers();
  const children: ChildProcess[] = [];

  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  test.each(SERVICES)(
    '%s: /livez answers 200 on the admin port, SIGTERM exits 0',
    async (service: Service) => {
      const prefix = `${uniqueName('img')}.`;
      const ports: Record<string, number> = { admin: await freePort() };
      if (service === 'gateway') ports.http = await freePort();
      if (service === 'moderator') ports.grpc = await freePort();
      const rendered = await renderChart({
        'mongo.url': mongoUrl,
        'mongo.database': uniqueName('img'),
        'kafka.brokers': kafkaBrokers.join(','),
        'kafka.topicPrefix': prefix,
        ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [`services.${service}.ports.${name}`, port])),
        // A group of its own: the shared development cluster serves other tests at the same time.
        ...(service === 'gateway' ? {} : { [`services.${service}.env.KAFKA_GROUP_ID`]: `${prefix}${service}` }),
      });
      const env = { ...(named(rendered, 'ConfigMap', `vigil-${service}`).data as Record<string, string>) };
      env.MONGO_URL = Buffer.from(
        named(rendered, 'Secret', 'vigil-mongo').data.MONGO_URL as string,
        'base64',
      ).toString();

      // As the image runs it: WORKDIR /app/<service>, NODE_ENV from the Dockerfile, nothing else inherited.
      const child = spawn(process.execPath, ['dist/main.js'], {
        cwd: path.join(ROOT, service),
        env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${output.slice(-2000)}`);
          const response = await fetch(`http://127.0.0.1:${ports.admin}/livez`);
          return response.status === 200;
        },
        { timeoutMs: 30000, what: `${service} /livez` },
      );
      child.kill('SIGTERM');
      const code = await Promise.race([
        exited,
        new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 25000).unref()),
      ]);
      expect({ code, output: code === 0 ? '' : output.slice(-2000) }).toEqual({ code: 0, output: '' });
    },
    90000,
  );
});
