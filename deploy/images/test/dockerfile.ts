// Reads the services' Dockerfile and assembles their images' file trees without a Docker daemon: the build stage's
// COPY and RUN steps run in a scratch folder standing for /app, then the runtime stages' COPY steps pick from it.
// Covers the instructions this Dockerfile uses (ARG, FROM, WORKDIR, ENV, COPY [--from], RUN, USER, EXPOSE, CMD), and
// `${NAME}` of the ARGs in scope.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import ignore from '@balena/dockerignore';
import { ROOT } from '../../test-support';

const exec = promisify(execFile);

export interface Instruction {
  keyword: string;
  flags: Record<string, string>;
  args: string;
}

export interface Dockerfile {
  /** ARGs declared before the first FROM, with their values (the build's, else the defaults). */
  args: Record<string, string>;
  /** The stage named `build`. */
  build: Instruction[];
  /**
   * The image's stages from its base image on, as one: the last stage, preceded by the stages it is built `FROM`
   * (their own FROM lines dropped), so that `runtime[0]` is the FROM of the base image.
   */
  runtime: Instruction[];
}

interface Stage {
  /** The name after AS, if any. */
  name?: string;
  /** The image or stage it is built FROM. */
  base: string;
  instructions: Instruction[];
  /** The ARGs the stage declared so far, with their values. */
  scope: Record<string, string>;
}

const FLAG = /^--([\w-]+)=(\S+)\s+/;

/** `${NAME}` and `$NAME` replaced by the values of `args`; a name not in `args` is left as written. */
function substitute(text: string, args: Record<string, string>): string {
  return text.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, braced?: string, bare?: string) => {
    const value = args[braced ?? bare ?? ''];
    return value ?? whole;
  });
}

/**
 * Splits a multi-stage Dockerfile into instructions (continuations joined, comments dropped) and picks the stages of
 * the image it builds with `buildArgs`. ARGs are substituted where Docker substitutes them: the global ones in FROM
 * lines, a stage's own (redeclared) ones in the instructions after their ARG line.
 */
export function parseDockerfile(text: string, buildArgs: Record<string, string> = {}): Dockerfile {
  const logical = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const args: Record<string, string> = {};
  const declared = new Set<string>();
  const stages: Stage[] = [];
  for (const line of logical) {
    const match = /^(\S+)\s+(.*)$/.exec(line);
    if (!match?.[1] || match[2] === undefined) throw new Error(`unparsable Dockerfile line: ${line}`);
    const keyword = match[1].toUpperCase();
    const current = stages[stages.length - 1];
    let remaining =
      keyword === 'FROM' ? substitute(match[2], args) : current ? substitute(match[2], current.scope) : match[2];
    const flags: Record<string, string> = {};
    for (let flag = FLAG.exec(remaining); flag?.[1] && flag[2]; flag = FLAG.exec(remaining)) {
      flags[flag[1]] = flag[2];
      remaining = remaining.slice(flag[0].length);
    }
    if (keyword === 'ARG') {
      const [name = '', ...value] = remaining.split('=');
      // The build's value, else the ARG's default, else (in a stage) the global ARG's.
      const resolved = buildArgs[name] ?? (value.length > 0 ? value.join('=') : (args[name] ?? ''));
      declared.add(name);
      if (!current) {
        args[name] = resolved;
        continue;
      }
      current.scope[name] = resolved;
      // Resolved, so that two builds given different values differ at this step, as Docker's cache keys do.
      current.instructions.push({ keyword, flags, args: `${name}=${resolved}` });
      continue;
    }
    const instruction: Instruction = { keyword, flags, args: remaining };
    if (keyword === 'FROM') {
      const [base = '', as, name] = remaining.split(/\s+/);
      if (base === '') throw new Error(`FROM without a base: ${line}`);
      stages.push({
        base,
        name: as?.toUpperCase() === 'AS' ? name : undefined,
        instructions: [instruction],
        scope: {},
      });
      continue;
    }
    if (!current) throw new Error(`${keyword} before the first FROM`);
    current.instructions.push(instruction);
  }
  for (const name of Object.keys(buildArgs)) if (!declared.has(name)) throw new Error(`build arg ${name} not declared`);
  const named = (name: string) => stages.find((stage) => stage.name === name);
  const build = named('build')?.instructions;
  if (!build) throw new Error('no stage named build');
  // From the last stage back along the stages it is built FROM, to the one on a base image.
  const chain: Stage[] = [];
  for (let stage = stages[stages.length - 1]; stage; stage = named(stage.base)) {
    if (chain.includes(stage)) throw new Error(`stages built FROM each other: ${stage.name ?? ''}`);
    chain.unshift(stage);
  }
  const runtime = chain.flatMap((stage, i) => (i === 0 ? stage.instructions : stage.instructions.slice(1)));
  return { args, build, runtime };
}

/** The image of `service`, as `docker build --build-arg SERVICE=<service>` builds it. */
export function readDockerfile(service: string): Dockerfile {
  return parseDockerfile(fs.readFileSync(path.join(ROOT, 'deploy', 'images', 'Dockerfile'), 'utf8'), {
    SERVICE: service,
  });
}

export function only(stage: Instruction[], keyword: string): Instruction[] {
  return stage.filter((instruction) => instruction.keyword === keyword);
}

export function last<T>(items: T[]): T | undefined {
  return items[items.length - 1];
}

export function copyParts(instruction: Instruction): { sources: string[]; destination: string } {
  const parts = instruction.args.split(/\s+/);
  return { sources: parts.slice(0, -1), destination: parts[parts.length - 1] ?? '' };
}

export const dockerignore = ignore().add(fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8'));

/** Every file under `dir` (relative to the repository root), without node_modules. */
export function filesUnder(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.name === 'node_modules') return [];
    return entry.isDirectory() ? filesUnder(relative) : [relative];
  });
}

/** Docker's COPY: a directory source copies its contents; a destination ending in `/` is a folder. */
function copy(from: string, to: string, filter?: (source: string) => boolean): void {
  const isDir = fs.statSync(from).isDirectory();
  const target = !isDir && to.endsWith('/') ? path.join(to, path.basename(from)) : to;
  fs.mkdirSync(isDir ? target : path.dirname(target), { recursive: true });
  fs.cpSync(from, target, { recursive: true, verbatimSymlinks: true, filter });
}

export interface ImageTree {
  /** Folder standing for the runtime stage's filesystem root of the app (`/app`). */
  appRoot: string;
  /** Working directory of the image's process, inside appRoot. */
  cwd: string;
  /** CMD in exec form. */
  command: string[];
  /** ENV of the runtime stage. */
  env: Record<string, string>;
}

const sameInstruction = (a: Instruction, b: Instruction) =>
  a.keyword === b.keyword && a.args === b.args && JSON.stringify(a.flags) === JSON.stringify(b.flags);

/**
 * Docker's build cache for the build-stage steps that several images share: the build folder as it stands after
 * their longest common run of instructions (up to its last RUN) is kept once, and later builds start from a copy of
 * it, so the three images run their common `npm ci` and type generation once. The checkout does not change while the tests run, so equal
 * instructions make equal folders, as Docker keys a COPY on the checksums of the files it copies.
 */
export class SharedLayers {
  /** The build-stage instructions the images share, ending on a RUN (empty when they share none). */
  readonly prefix: Instruction[];
  private kept = false;

  constructor(
    private readonly dir: string,
    dockerfiles: Dockerfile[],
  ) {
    // The FROM lines and the stages' ARG steps carry the values of the arguments, so equal steps are equal builds.
    const [first, ...others] = dockerfiles;
    let length = 0;
    const build = first?.build ?? [];
    while (
      length < build.length &&
      others.every((other) => {
        const a = build[length];
        const b = other.build[length];
        return a && b && sameInstruction(a, b);
      })
    ) {
      length++;
    }
    // Up to the last RUN: only RUN steps cost enough to be worth a copy.
    while (length > 0 && build[length - 1]?.keyword !== 'RUN') length--;
    this.prefix = build.slice(0, length);
  }

  /** The number of `dockerfile`'s build instructions the kept folder stands for (0 when it does not apply). */
  private covered(dockerfile: Dockerfile): number {
    const applies =
      this.prefix.length > 0 &&
      this.prefix.every((instruction, i) => {
        const own = dockerfile.build[i];
        return own !== undefined && sameInstruction(instruction, own);
      });
    return applies ? this.prefix.length : 0;
  }

  /** Copies the kept folder to `buildRoot` when it applies; returns the number of instructions it stands for. */
  async restore(dockerfile: Dockerfile, buildRoot: string): Promise<number> {
    const count = this.covered(dockerfile);
    if (!this.kept || count === 0) return 0;
    fs.mkdirSync(buildRoot, { recursive: true });
    await exec('cp', ['-a', `${this.dir}/.`, buildRoot]);
    return count;
  }

  /** Keeps a copy of `buildRoot` once `done` instructions of `dockerfile` ran and they are the shared ones. */
  async keep(dockerfile: Dockerfile, done: number, buildRoot: string): Promise<void> {
    if (this.kept || done === 0 || done !== this.covered(dockerfile)) return;
    fs.mkdirSync(this.dir, { recursive: true });
    await exec('cp', ['-a', `${buildRoot}/.`, this.dir]);
    this.kept = true;
  }
}

/**
 * Assembles the image of `service` under `scratch`. RUN steps run with `sh -c` in the build folder; npm prefers its
 * local cache. Only `/app` paths are supported, which is all the Dockerfile uses. `layers` skips the steps shared
 * with images assembled before, as Docker's build cache does.
 */
export async function assembleImage(service: string, scratch: string, layers?: SharedLayers): Promise<ImageTree> {
  const dockerfile = readDockerfile(service);
  const { build, runtime } = dockerfile;
  const buildRoot = path.join(scratch, 'build');
  const appRoot = path.join(scratch, 'runtime');
  const local = (root: string, workdir: string, target: string) => {
    const absolute = path.posix.resolve(workdir, target);
    if (absolute !== '/app' && !absolute.startsWith('/app/')) throw new Error(`path outside /app: ${target}`);
    return path.join(root, absolute.slice('/app'.length)) + (target.endsWith('/') ? '/' : '');
  };
  // What the build context holds: the repository less .dockerignore.
  const inContext = (file: string) => {
    const relative = path.relative(ROOT, file).split(path.sep).join('/');
    return relative === '' || !dockerignore.ignores(relative);
  };

  let workdir = '/';
  const buildEnv: Record<string, string> = {};
  // Instructions before `restored` are in the folder already (their COPY and RUN steps are skipped).
  const restored = (await layers?.restore(dockerfile, buildRoot)) ?? 0;
  for (const [index, instruction] of build.entries()) {
    if (instruction.keyword === 'WORKDIR') workdir = path.posix.resolve(workdir, instruction.args);
    if (instruction.keyword === 'ENV') Object.assign(buildEnv, parseEnv(instruction.args));
    // A RUN step sees the stage's ARGs in its environment, as in Docker.
    if (instruction.keyword === 'ARG') Object.assign(buildEnv, parseEnv(instruction.args));
    if (index < restored) continue;
    if (instruction.keyword === 'COPY') {
      const { sources, destination } = copyParts(instruction);
      for (const source of sources) copy(path.join(ROOT, source), local(buildRoot, workdir, destination), inContext);
    }
    if (instruction.keyword === 'RUN') {
      const cwd = local(buildRoot, workdir, '.');
      fs.mkdirSync(cwd, { recursive: true });
      await exec('sh', ['-c', instruction.args], {
        cwd,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          ...buildEnv,
          npm_config_prefer_offline: 'true',
        },
        maxBuffer: 64 * 1024 * 1024,
      });
    }
    await layers?.keep(dockerfile, index + 1, buildRoot);
  }

  workdir = '/';
  const env: Record<string, string> = {};
  let command: string[] = [];
  for (const instruction of runtime) {
    if (instruction.keyword === 'WORKDIR') workdir = path.posix.resolve(workdir, instruction.args);
    if (instruction.keyword === 'ENV') Object.assign(env, parseEnv(instruction.args));
    if (instruction.keyword === 'CMD') command = JSON.parse(instruction.args) as string[];
    if (instruction.keyword === 'COPY') {
      const { sources, destination } = copyParts(instruction);
      for (const source of sources) {
        if (instruction.flags.from === 'build')
          copy(local(buildRoot, '/', source).replace(/\/$/, ''), local(appRoot, workdir, destination));
        else copy(path.join(ROOT, source), local(appRoot, workdir, destination), inContext);
      }
    }
  }
  return { appRoot, cwd: local(appRoot, workdir, '.'), command, env };
}

function parseEnv(args: string): Record<string, string> {
  return Object.fromEntries(
    args.split(/\s+/).map((pair) => {
      const [name = '', ...value] = pair.split('=');
      return [name, value.join('=')];
    }),
  );
}
