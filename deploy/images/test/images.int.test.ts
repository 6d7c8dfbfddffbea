import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chartTools, named, renderChart } from '../../tools/chart';
import { ROOT, testServers, uniqueName, waitFor } from '../../test-support';
import { SERVICE_NODE_FLAGS } from '../../local/service-command';
import {
  assembleImage,
  copyParts,
  dockerignore,
  filesUnder,
  last,
  only,
  parseDockerfile,
  readDockerfile,
  SharedLayers,
  type Instruction,
} from './dockerfile';

// The service images, checked without a Docker daemon: the Dockerfile is parsed for each service (SERVICE=<service>)
// and held to the image rules (build from the repository root, a build stage and the runtime stages, only built output
// in the runtime stages, non-root, exec-form CMD), and each built service is started the way its image starts it,
// with the environment the chart gives it.
const SERVICES = ['gateway', 'moderator', 'notifier'] as const;
type Service = (typeof SERVICES)[number];
const BASE_IMAGE = 'node:20-bookworm-slim';

describe.each(SERVICES)('%s image', (service) => {
  const dockerfile = readDockerfile(service);
  const { build, runtime } = dockerfile;
  const baseOf = (stage: Instruction[]) => stage[0]?.args.split(/\s+/)[0];

  test(`a build and a runtime on ${BASE_IMAGE}: build with tsc, run the built output`, () => {
    expect(dockerfile.args.SERVICE).toBe(service);
    expect(build[0]?.args).toMatch(/\sAS build$/i);
    expect([baseOf(build), baseOf(runtime)]).toEqual([BASE_IMAGE, BASE_IMAGE]);
    const runs = only(build, 'RUN').map((instruction) => instruction.args);
    expect(runs).toContainEqual(expect.stringMatching(/^npm ci\b/));
    expect(runs).toContain(`npx tsc -b ${service}`);
    expect(runs).toContainEqual(expect.stringMatching(new RegExp(`npm ci --omit=dev --workspace ${service}\\b`)));
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
    // The same command as everywhere else the service is started (deploy/local/service-command.js).
    expect(JSON.parse(cmds[0]?.args ?? 'null')).toEqual(['node', ...SERVICE_NODE_FLAGS, 'dist/main.js']);
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, service, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.start).toBe(['node', ...SERVICE_NODE_FLAGS, 'dist/main.js'].join(' '));
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
    // Folders the build stage creates itself (`mkdir -p`, relative to WORKDIR /app).
    const created = only(build, 'RUN').flatMap((instruction) =>
      [...instruction.args.matchAll(/mkdir -p ((?:[\w./-]+ ?)+)/g)].flatMap(([, paths = '']) =>
        paths.trim().split(/\s+/),
      ),
    );
    expect(created).toEqual(expect.arrayContaining([`${service}/node_modules`]));
    for (const source of sources) {
      expect(source.startsWith('/app/')).toBe(true);
      // The same path in this checkout after `npm ci` and `tsc -b`, or one the build creates.
      const relative = source.slice('/app/'.length).replace(/\/$/, '') || '.';
      const exists = created.includes(relative) || fs.existsSync(path.join(ROOT, relative));
      expect({ source, exists }).toEqual({ source, exists: true });
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

/** Bare package names a built folder requires at run time (`require("x")` in its .js files). */
function requiredPackages(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (folder: string) => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const file = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith('.js')) {
        for (const [, specifier = ''] of fs.readFileSync(file, 'utf8').matchAll(/require\("([^"./][^"]*)"\)/g)) {
          if (specifier.startsWith('node:') || builtinModules.includes(specifier)) continue;
          const name = specifier
            .split('/')
            .slice(0, specifier.startsWith('@') ? 2 : 1)
            .join('/');
          if (!found.has(name)) found.set(name, path.relative(ROOT, file));
        }
      }
    }
  };
  walk(dir);
  return found;
}

test.each(['proto', ...SERVICES])('%s declares every package its built code requires', (workspace) => {
  // A production install (`npm ci --omit=dev --workspace …`) brings only declared dependencies; in the
  // development checkout an undeclared one is often hoisted from another workspace and goes unnoticed.
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, workspace, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  const declared = new Set(Object.keys(manifest.dependencies ?? {}));
  const required = requiredPackages(path.join(ROOT, workspace, 'dist'));
  expect(required.size).toBeGreaterThan(0);
  const undeclared = [...required].filter(([name]) => !declared.has(name)).map(([name, file]) => `${name} (${file})`);
  expect(undeclared).toEqual([]);
});

test('the Dockerfile builds no image without a SERVICE', () => {
  const text = fs.readFileSync(path.join(ROOT, 'deploy', 'images', 'Dockerfile'), 'utf8');
  expect(() => parseDockerfile(text)).toThrow(/FROM without a base/);
  expect(() => parseDockerfile(text, { SERVICE: 'gateway', OTHER: 'x' })).toThrow(/OTHER not declared/);
});

test('the moderator image holds the script the chart topics Job runs', async () => {
  const { runtime } = readDockerfile('moderator');
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

describe('assembled images start with the chart environment', () => {
  const { kafkaBrokers, mongoUrl } = testServers();
  const children: ChildProcess[] = [];
  let scratch: string;
  let layers: SharedLayers;

  beforeAll(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'vigil-images-'));
    // The images' common first steps (manifests, `npm ci`) run once, as on a Docker host with a build cache.
    layers = new SharedLayers(path.join(scratch, 'shared-layers'), SERVICES.map(readDockerfile));
  });

  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  test('the images share their dependency install and type generation, which run once for the three', () => {
    expect(layers.prefix.map((instruction) => instruction.keyword)).toContain('COPY');
    expect(only(layers.prefix, 'RUN').map((instruction) => instruction.args)).toEqual([
      expect.stringMatching(/^npm ci\b/),
      'npm run generate --workspace proto',
    ]);
  });

  test.each(SERVICES)(
    '%s: built by its Dockerfile steps, /livez answers 200 on the admin port, SIGTERM exits 0',
    async (service: Service) => {
      // The Dockerfile's own steps (npm ci, tsc -b, production install), then only the runtime stage's files.
      const image = await assembleImage(service, path.join(scratch, service), layers);
      expect(image.command).toEqual(['node', ...SERVICE_NODE_FLAGS, 'dist/main.js']);
      expect(fs.existsSync(path.join(image.appRoot, 'src'))).toBe(false);
      expect(fs.existsSync(path.join(image.cwd, 'src'))).toBe(false);
      expect(fs.existsSync(path.join(image.appRoot, 'node_modules', 'typescript'))).toBe(false);

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
        // The moderator judges images, as the chart runs it once IMAGE_THREADS is set: the image must hold the model,
        // the WebAssembly backend and the image decoder's native library for its platform.
        ...(service === 'moderator' ? { 'services.moderator.env.IMAGE_THREADS': '1' } : {}),
      });
      const env = { ...(named(rendered, 'ConfigMap', `vigil-${service}`).data as Record<string, string>) };
      env.MONGO_URL = Buffer.from(
        named(rendered, 'Secret', 'vigil-mongo').data.MONGO_URL as string,
        'base64',
      ).toString();
      if (service !== 'notifier') {
        // The chart's generated gRPC token, as the pod receives it from its Secret.
        env.MODERATOR_GRPC_TOKEN = Buffer.from(
          named(rendered, 'Secret', 'vigil-moderator-token').data.MODERATOR_GRPC_TOKEN as string,
          'base64',
        ).toString();
      }

      if (service === 'moderator') {
        // The chart's topics Job runs `node init-topics.js` in this image: its modules must resolve in this layout.
        const job = await new Promise<{ code: number | null; output: string }>((resolve) => {
          const run = spawn(process.execPath, ['init-topics.js'], {
            cwd: image.cwd,
            env: {
              PATH: process.env.PATH ?? '',
              ...image.env,
              KAFKA_BROKERS: env.KAFKA_BROKERS,
              KAFKA_TOPIC_PREFIX: prefix,
            },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let text = '';
          run.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
          run.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
          run.on('close', (code) => resolve({ code, output: text }));
        });
        expect(job.output).toContain('"msg":"topics ready"');
        expect(job.code).toBe(0);
      }

      // As the container runs it: the image's WORKDIR, CMD and ENV plus the pod's environment, nothing inherited.
      const [, ...args] = image.command;
      const child = spawn(process.execPath, args, {
        cwd: image.cwd,
        env: { PATH: process.env.PATH ?? '', ...image.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

      await waitFor(
        async () => {
          if (child.exitCode !== null) return `exited with ${child.exitCode}`;
          const response = await fetch(`http://127.0.0.1:${ports.admin}/livez`);
          return response.status === 200 ? 'live' : undefined;
        },
        { timeoutMs: 30000, what: `${service} /livez` },
      ).then((state) =>
        expect({ state, output: state === 'live' ? '' : output.slice(-2000) }).toEqual({ state: 'live', output: '' }),
      );
      if (service === 'moderator') {
        // Readiness waits for the model in every image thread; a model that failed to load is logged.
        const loaded = await waitFor(
          () =>
            /"msg":"image model (loaded|failed to load)"/.exec(output)?.[1] ??
            (child.exitCode !== null ? `exited with ${child.exitCode}` : undefined),
          { timeoutMs: 120000, what: 'the image model in the assembled moderator' },
        );
        expect({ loaded, output: loaded === 'loaded' ? '' : output.slice(-2000) }).toEqual({
          loaded: 'loaded',
          output: '',
        });
        await waitFor(
          async () => ((await fetch(`http://127.0.0.1:${ports.admin}/readyz`)).status === 200 ? true : undefined),
          { timeoutMs: 60000, what: 'the assembled moderator ready' },
        );
      }
      child.kill('SIGTERM');
      const code = await Promise.race([
        exited,
        new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 25000).unref()),
      ]);
      expect({ code, output: code === 0 ? '' : output.slice(-2000) }).toEqual({ code: 0, output: '' });
    },
    5 * 60 * 1000,
  );
});
