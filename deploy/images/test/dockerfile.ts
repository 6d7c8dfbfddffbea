// Reads the service Dockerfiles and assembles their images' file trees without a Docker daemon: the build stage's
// COPY and RUN steps run in a scratch folder standing for /app, then the runtime stage's COPY steps pick from it.
// Covers the instructions these Dockerfiles use (ARG, FROM, WORKDIR, ENV, COPY [--from], RUN, USER, EXPOSE, CMD).
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
  /** ARGs declared before the first FROM, with their defaults. */
  args: Record<string, string>;
  build: Instruction[];
  runtime: Instruction[];
}

const FLAG = /^--([\w-]+)=(\S+)\s+/;

/** Splits a two-stage Dockerfile into instructions (continuations joined, comments dropped). */
export function parseDockerfile(text: string): Dockerfile {
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

export function readDockerfile(service: string): Dockerfile {
  return parseDockerfile(fs.readFileSync(path.join(ROOT, service, 'Dockerfile'), 'utf8'));
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

/**
 * Assembles the image of `service` under `scratch`. RUN steps run with `sh -c` in the build folder; npm prefers its
 * local cache. Only `/app` paths are supported, which is all these Dockerfiles use.
 */
export async function assembleImage(service: string, scratch: string): Promise<ImageTree> {
  const { build, runtime } = readDockerfile(service);
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
  for (const instruction of build) {
    if (instruction.keyword === 'WORKDIR') workdir = path.posix.resolve(workdir, instruction.args);
    if (instruction.keyword === 'ENV') Object.assign(buildEnv, parseEnv(instruction.args));
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
