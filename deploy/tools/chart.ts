// Helpers for tests that render the Helm chart: helm and kubeconform from the cache (deploy/tools/install.js).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { ensureTools, type Tools } from './install';

const run = promisify(execFile);

export const CHART_DIR = path.resolve(__dirname, '..', 'helm', 'vigil');

/** Any field of a rendered object: tests read the fields they check and assert their shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Field = any;

/** A rendered Kubernetes object, loosely typed. */
export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [key: string]: Field };
  [key: string]: Field;
};

export interface Rendered {
  /** helm's output as is (YAML with `# Source:` comments). */
  text: string;
  manifests: Manifest[];
  /** Template file that produced each manifest, parallel to `manifests`. */
  sources: string[];
}

let tools: Promise<Tools> | undefined;
export function chartTools(): Promise<Tools> {
  tools ??= ensureTools();
  return tools;
}

/** `helm <args>`; rejects with helm's stderr in the message on a non-zero exit. */
export async function helm(args: string[]): Promise<string> {
  const { helm: bin } = await chartTools();
  try {
    const { stdout } = await run(bin, args, {
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, HELM_CACHE_HOME: path.join(path.dirname(bin), '.helm') },
    });
    return stdout;
  } catch (err) {
    const failure = err as Error & { stderr?: string };
    throw new Error(`helm ${args[0]} failed: ${failure.stderr ?? failure.message}`);
  }
}

/** Renders the chart as release `vigil` with `--set` pairs and extra arguments (e.g. `-f file`). */
export async function renderChart(
  set: Record<string, string | number | boolean> = {},
  extra: string[] = [],
): Promise<Rendered> {
  // Strings go through --set-string so commas and digits stay as written; numbers and booleans keep their type.
  const setArgs = Object.entries(set).flatMap(([key, value]) => [
    typeof value === 'string' ? '--set-string' : '--set',
    `${key}=${String(value).replace(/[\\,]/g, (c) => `\\${c}`)}`,
  ]);
  const text = await helm(['template', 'vigil', CHART_DIR, '--namespace', 'moderation', ...setArgs, ...extra]);
  const manifests: Manifest[] = [];
  const sources: string[] = [];
  for (const chunk of text.split(/^---$/m)) {
    const source = /^# Source: (.+)$/m.exec(chunk)?.[1];
    for (const doc of parseAllDocuments(chunk)) {
      const [error] = doc.errors;
      if (error) throw new Error(`helm rendered invalid YAML in ${source ?? 'an unnamed template'}: ${error.message}`);
      const value = doc.toJS() as Manifest | null;
      if (value === null) continue;
      manifests.push(value);
      sources.push(source ?? '');
    }
  }
  return { text, manifests, sources };
}

export interface Validation {
  ok: boolean;
  output: string;
}

/**
 * Validates manifests against the Kubernetes schemas with kubeconform, strictly (unknown fields are errors).
 * `skipKinds` lists kinds without a bundled schema (custom resources).
 */
export async function validateManifests(yamlText: string, skipKinds: string[] = []): Promise<Validation> {
  const { kubeconform, kubernetesVersions, schemaLocation } = await chartTools();
  const results = await Promise.all(
    kubernetesVersions.map((version) => kubeconformRun(kubeconform, version, schemaLocation, yamlText, skipKinds)),
  );
  return {
    ok: results.every((result) => result.ok),
    output: results.map((result, i) => `Kubernetes ${kubernetesVersions[i]}:\n${result.output}`).join('\n'),
  };
}

function kubeconformRun(
  bin: string,
  version: string,
  schemaLocation: string,
  yamlText: string,
  skipKinds: string[],
): Promise<Validation> {
  const args = [
    '-strict',
    '-summary',
    '-output',
    'text',
    '-kubernetes-version',
    version,
    '-schema-location',
    schemaLocation,
  ];
  if (skipKinds.length > 0) args.push('-skip', skipKinds.join(','));
  return new Promise((resolve, reject) => {
    const child = execFile(bin, [...args, '-'], { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const output = `${stdout}${stderr}`;
      if (err && typeof err.code !== 'number') reject(err instanceof Error ? err : new Error('helm failed'));
      else resolve({ ok: !err, output });
    });
    child.stdin?.end(yamlText);
  });
}

export function byKind(rendered: Rendered, kind: string): Manifest[] {
  return rendered.manifests.filter((manifest) => manifest.kind === kind);
}

export function named(rendered: Rendered, kind: string, name: string): Manifest {
  const found = rendered.manifests.find((manifest) => manifest.kind === kind && manifest.metadata.name === name);
  if (!found) throw new Error(`no ${kind} named ${name} in the rendered chart`);
  return found;
}
