import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** The folders of nsfwjs's package (`dist/models/<folder>`) that hold each bundled model. */
const FOLDERS = {
  MobileNetV2: 'mobilenet_v2',
  MobileNetV2Mid: 'mobilenet_v2_mid',
  InceptionV3: 'inception_v3',
} as const;

export type BundledModel = keyof typeof FOLDERS;

/**
 * The weight shards of an nsfwjs bundled model, read from the package's files as the base64 text each one exports,
 * named as nsfwjs looks them up on the global object (`group1_shard1of2`, …), which it prefers to importing them.
 *
 * Why: each shard is a script whose export is one string of up to 5.5 MB, and nsfwjs 4.4's CommonJS build imports it
 * through TypeScript's `__importStar`, which defines a property for every character of that string: loading
 * MobileNetV2Mid that way took about 1 GB of heap and 6 s, and ran out of memory under a `--max-old-space-size` of
 * 768. Read as text, the same weights load in well under a second in a few tens of megabytes. Nothing is parsed but
 * the string literal; a shard that does not hold one is left out, and nsfwjs then imports it itself.
 */
export function bundledWeightShards(model: BundledModel, packageEntry: string): Record<string, string> {
  // `packageEntry` is nsfwjs's CommonJS entry (dist/cjs/index.js); the models sit beside the builds.
  const folder = path.join(path.dirname(packageEntry), '..', 'models', FOLDERS[model]);
  const shards: Record<string, string> = {};
  for (const file of readdirSync(folder)) {
    const match = /^(group1-shard\d+of\d+)\.min\.js$/.exec(file);
    if (!match?.[1]) continue;
    const base64 = exportedString(readFileSync(path.join(folder, file), 'latin1'));
    if (base64 !== undefined) shards[match[1].replace(/-/g, '_')] = base64;
  }
  return shards;
}

/** The string literal a browserified shard exports (`….exports="<base64>"`), when it is one of base64 only. */
export function exportedString(script: string): string | undefined {
  const marker = '.exports="';
  const start = script.indexOf(marker);
  if (start < 0) return undefined;
  const from = start + marker.length;
  const end = script.indexOf('"', from);
  if (end < 0) return undefined;
  const text = script.slice(from, end);
  // Canonical base64 only: Node's decoder skips what is not base64, so anything else comes back changed. (Not a
  // regular expression: on a string of megabytes one ran out of stack.)
  return text.length > 0 && Buffer.from(text, 'base64').toString('base64') === text ? text : undefined;
}
